// emu-sim's C ABI over a Verilated NF module (sim/src/verilator.rs loads it with libloading).
// `EMU_TOP_HEADER` and `EMU_TOP_CLASS` name Verilator's class of the top module ("Vemu_nf.h",
// Vemu_nf); `EMU_DATA_BITS` is the SUME data width (64 or 256);
// `EMU_TRACE` 1 when the model was Verilated with --trace; `EMU_DEBUG` 1 when the NF module has
// the debug unit's register port (emu-hls backend/debug.rs). The port types differ with the
// width (QData or VlWide<8> for tdata, CData or IData for tkeep), so every port is set and
// read through the overloads of `put` and `get`, from and to little-endian 32-bit words.
#include <cstddef>
#include <cstdint>

#include "verilated.h"
#if EMU_TRACE
#include "verilated_vcd_c.h"
#endif

#include EMU_TOP_HEADER
typedef EMU_TOP_CLASS Top;

#define EMU_API extern "C" __attribute__((visibility("default")))

// The inputs but the clock. Wide values are 32-bit words, least significant first.
struct EmuInputs {
    uint32_t s_axis_tdata[8];
    uint32_t s_axis_tuser[4];
    uint64_t s_axis_tkeep;
    uint8_t axis_resetn;
    uint8_t s_axis_tvalid;
    uint8_t s_axis_tlast;
    uint8_t m_axis_tready;
};

// The outputs.
struct EmuOutputs {
    uint32_t m_axis_tdata[8];
    uint32_t m_axis_tuser[4];
    uint64_t m_axis_tkeep;
    uint8_t s_axis_tready;
    uint8_t m_axis_tvalid;
    uint8_t m_axis_tlast;
    uint8_t stat_drop_valid;
    uint8_t stat_drop_reason;
};

// The debug unit's register port: a request for the next clock edge, and the response.
struct EmuDebugIn {
    uint32_t addr;
    uint32_t wdata;
    uint8_t valid;
    uint8_t write;
};

struct EmuDebugOut {
    uint32_t rdata;
    uint8_t valid;
};

struct EmuModel {
    VerilatedContext* ctx;
    Top* top;
#if EMU_TRACE
    VerilatedVcdC* vcd;
#endif
};

static inline void put(CData& p, const uint32_t* w) { p = (CData)w[0]; }
static inline void put(SData& p, const uint32_t* w) { p = (SData)w[0]; }
static inline void put(IData& p, const uint32_t* w) { p = w[0]; }
static inline void put(QData& p, const uint32_t* w) { p = (QData)w[0] | ((QData)w[1] << 32); }
template <std::size_t N>
static inline void put(VlWide<N>& p, const uint32_t* w) {
    for (std::size_t i = 0; i < N; i++) p[i] = w[i];
}

static inline void get(const CData& p, uint32_t* w) { w[0] = p; }
static inline void get(const SData& p, uint32_t* w) { w[0] = p; }
static inline void get(const IData& p, uint32_t* w) { w[0] = p; }
static inline void get(const QData& p, uint32_t* w) {
    w[0] = (uint32_t)p;
    w[1] = (uint32_t)(p >> 32);
}
template <std::size_t N>
static inline void get(const VlWide<N>& p, uint32_t* w) {
    for (std::size_t i = 0; i < N; i++) w[i] = p[i];
}

// The version of this interface, checked by the loader.
EMU_API uint32_t emu_vl_abi(void) { return 2; }

// The data width the model was built for.
EMU_API uint32_t emu_vl_data_bits(void) { return EMU_DATA_BITS; }

// 1 when the model can write a VCD.
EMU_API uint32_t emu_vl_traced(void) { return EMU_TRACE; }

// A new model, evaluated once with every input low.
EMU_API void* emu_vl_new(void) {
    EmuModel* m = new EmuModel;
    m->ctx = new VerilatedContext;
#if EMU_TRACE
    m->ctx->traceEverOn(true);
    m->vcd = nullptr;
#endif
    m->top = new Top{m->ctx, "top"};
    m->top->axis_aclk = 0;
    m->top->axis_resetn = 0;
    m->top->eval();
    return m;
}

EMU_API void emu_vl_free(void* p) {
    EmuModel* m = (EmuModel*)p;
#if EMU_TRACE
    if (m->vcd) {
        m->vcd->close();
        delete m->vcd;
    }
#endif
    m->top->final();
    delete m->top;
    delete m->ctx;
    delete m;
}

EMU_API void emu_vl_set_clock(void* p, uint8_t level) { ((EmuModel*)p)->top->axis_aclk = level & 1; }

EMU_API void emu_vl_set_inputs(void* p, const EmuInputs* in) {
    Top* t = ((EmuModel*)p)->top;
    uint32_t keep[2] = {(uint32_t)in->s_axis_tkeep, (uint32_t)(in->s_axis_tkeep >> 32)};
    t->axis_resetn = in->axis_resetn & 1;
    put(t->s_axis_tdata, in->s_axis_tdata);
    put(t->s_axis_tkeep, keep);
    put(t->s_axis_tuser, in->s_axis_tuser);
    t->s_axis_tvalid = in->s_axis_tvalid & 1;
    t->s_axis_tlast = in->s_axis_tlast & 1;
    t->m_axis_tready = in->m_axis_tready & 1;
}

// 1 when the model has the debug unit's port.
EMU_API uint32_t emu_vl_debug(void) { return EMU_DEBUG; }

EMU_API void emu_vl_set_debug(void* p, const EmuDebugIn* in) {
#if EMU_DEBUG
    Top* t = ((EmuModel*)p)->top;
    t->dbg_req_valid = in->valid & 1;
    t->dbg_req_write = in->write & 1;
    t->dbg_req_addr = in->addr;
    t->dbg_req_wdata = in->wdata;
#else
    (void)p;
    (void)in;
#endif
}

EMU_API void emu_vl_get_debug(void* p, EmuDebugOut* out) {
#if EMU_DEBUG
    Top* t = ((EmuModel*)p)->top;
    out->valid = t->dbg_resp_valid;
    out->rdata = t->dbg_resp_rdata;
#else
    (void)p;
    out->valid = 0;
    out->rdata = 0;
#endif
}

EMU_API void emu_vl_eval(void* p) { ((EmuModel*)p)->top->eval(); }

EMU_API void emu_vl_get_outputs(void* p, EmuOutputs* out) {
    Top* t = ((EmuModel*)p)->top;
    uint32_t keep[2] = {0, 0};
    get(t->m_axis_tdata, out->m_axis_tdata);
    get(t->m_axis_tkeep, keep);
    out->m_axis_tkeep = (uint64_t)keep[0] | ((uint64_t)keep[1] << 32);
    get(t->m_axis_tuser, out->m_axis_tuser);
    out->s_axis_tready = t->s_axis_tready;
    out->m_axis_tvalid = t->m_axis_tvalid;
    out->m_axis_tlast = t->m_axis_tlast;
    out->stat_drop_valid = t->stat_drop_valid;
    out->stat_drop_reason = t->stat_drop_reason;
}

// Starts a VCD at `path`: 0 on success, -1 when the model was built without tracing.
EMU_API int emu_vl_trace_open(void* p, const char* path) {
#if EMU_TRACE
    EmuModel* m = (EmuModel*)p;
    if (!m->vcd) {
        m->vcd = new VerilatedVcdC;
        m->top->trace(m->vcd, 99);
        m->vcd->open(path);
    }
    return m->vcd->isOpen() ? 0 : -1;
#else
    (void)p;
    (void)path;
    return -1;
#endif
}

// Writes the signals' values at `time` to the VCD, if one is open.
EMU_API void emu_vl_trace_dump(void* p, uint64_t time) {
#if EMU_TRACE
    EmuModel* m = (EmuModel*)p;
    if (m->vcd) m->vcd->dump(time);
#else
    (void)p;
    (void)time;
#endif
}

// Flushes and closes the VCD, if one is open.
EMU_API void emu_vl_trace_close(void* p) {
#if EMU_TRACE
    EmuModel* m = (EmuModel*)p;
    if (m->vcd) {
        m->vcd->close();
        delete m->vcd;
        m->vcd = nullptr;
    }
#else
    (void)p;
#endif
}
