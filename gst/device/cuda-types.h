/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The few CUDA driver API types and constants gst-cudaipc uses, declared
 * here so that building needs no CUDA toolkit. Layouts follow the driver's
 * public ABI (cuda.h, CUDA 11.x/12.x); only what the loader resolves is
 * declared. Values are the driver's own.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_NOT_SUPPORTED 801

typedef struct
{
  char bytes[16];
} CUuuid;

#define CU_IPC_HANDLE_SIZE 64
typedef struct
{
  char reserved[CU_IPC_HANDLE_SIZE];
} CUipcEventHandle;

/* CUdevice_attribute */
#define CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33
#define CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID 34
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED 102
#define CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED 103
/* 64-bit stream memory operations: 122 answers for the _v2 entry points
 * (CUDA 11.7 on), which every device has; 93, the first API's, answers 0
 * unless the nvidia module was loaded with NVreg_EnableStreamMemOPs=1 */
#define CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS 122
#define CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 93

/* cuMemHostRegister flags */
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02

/* CUstreamWriteValue_flags: the default puts a memory barrier before the
 * write */
#define CU_STREAM_WRITE_VALUE_DEFAULT 0x0

/* CUmemAllocationType, CUmemLocationType, CUmemAllocationHandleType */
#define CU_MEM_ALLOCATION_TYPE_PINNED 0x1
#define CU_MEM_LOCATION_TYPE_DEVICE 0x1
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 0x1

/* CUmemAccess_flags */
#define CU_MEM_ACCESS_FLAGS_PROT_NONE 0x0
#define CU_MEM_ACCESS_FLAGS_PROT_READ 0x1
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE 0x3

/* CUmemAllocationGranularity_flags */
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM 0x0
#define CU_MEM_ALLOC_GRANULARITY_RECOMMENDED 0x1

/* CUevent_flags, CUstream_flags */
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_EVENT_INTERPROCESS 0x4
#define CU_STREAM_NON_BLOCKING 0x1

/* CUmemorytype */
#define CU_MEMORYTYPE_HOST 0x1
#define CU_MEMORYTYPE_DEVICE 0x2

typedef struct
{
  int type;                     /* CUmemLocationType */
  int id;
} CUmemLocation;

typedef struct
{
  int type;                     /* CUmemAllocationType */
  int requestedHandleTypes;     /* CUmemAllocationHandleType */
  CUmemLocation location;
  void *win32HandleMetaData;
  struct
  {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;

typedef struct
{
  CUmemLocation location;
  int flags;                    /* CUmemAccess_flags */
} CUmemAccessDesc;

typedef struct
{
  size_t srcXInBytes;
  size_t srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes;
  size_t dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes;
  size_t Height;
} CUDA_MEMCPY2D;
