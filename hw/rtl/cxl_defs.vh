// cxl_defs.vh - the packing of a CXL.mem message (cxl_msg in hw/hls/cxl_types.h) into a bit vector,
// defined once for every hw/rtl module and for the Verilator harness (tests/rtl/unit/rtl_msg.h
// mirrors these offsets for C++).
//
// Fields in cxl_msg declaration order, least significant first; the C struct's `pad` byte is not
// carried. Use as `msg[`CXL_MSG_CLS]`.
`ifndef CXL_DEFS_VH
`define CXL_DEFS_VH

`define CXL_MSG_W        120
`define CXL_MSG_ADDR     63:0
`define CXL_MSG_TAG      79:64
`define CXL_MSG_REQ      87:80
`define CXL_MSG_CLS      95:88
`define CXL_MSG_HOST     103:96
`define CXL_MSG_DEV      111:104
`define CXL_MSG_DEVLOAD  119:112

// enum cxl_msg_class
`define CXL_NCLASS       4
`define CXL_M2S_REQ      0
`define CXL_M2S_RWD      1
`define CXL_S2M_DRS      2
`define CXL_S2M_NDR      3

// sizes of hw/hls/cxl_params.h and credit.h
`define CXL_MAX_FIFO     256
`define CXL_CREDIT_RING  256

`endif
