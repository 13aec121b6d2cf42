/* The LLVM backend (docs/llvm-backend.md): a kernel from its variant's
 * bitcode, compiled into the library from the same templates NVRTC
 * compiles, with the sizes fixed, optimized and lowered by LLVM's NVPTX
 * target to PTX, which the driver compiles when it loads the module
 * (module.c). No C++ front end runs and NVRTC is not needed. Every LLVM
 * object lives in a context of its own per compile, so compiles run in
 * parallel. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <xxhash.h>

#include "llvm_catalog.h"

#define JG_LLVM_TRIPLE "nvptx64-nvidia-cuda"
/* PTX 8.0: the first with sm_90a's wgmma and setmaxnreg */
#define JG_LLVM_FEATURES "+ptx80"
#define JG_LLVM_PASSES "default<O3>"

static pthread_once_t target_once = PTHREAD_ONCE_INIT;

static void target_init(void)
{
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

const char *jg__llvm_options(void)
{
    return LLVM_VERSION_STRING " " JG_LLVM_FEATURES " " JG_LLVM_PASSES;
}

jg__hash128 jg__llvm_catalog_hash(void)
{
    XXH3_state_t *s = XXH3_createState();
    jg__hash128 out = {0, 0};
    if (!s)
        return out;
    XXH3_128bits_reset(s);
    for (size_t i = 0; i < jg__llvm_variants_count; ++i) {
        XXH3_128bits_update(s, &jg__llvm_variants[i].prelude, sizeof(jg__hash128));
        XXH3_128bits_update(s, jg__llvm_variants[i].bitcode, jg__llvm_variants[i].len);
    }
    XXH128_hash_t h = XXH3_128bits_digest(s);
    XXH3_freeState(s);
    out.lo = h.low64;
    out.hi = h.high64;
    return out;
}

size_t jg__llvm_variant_count(void) { return jg__llvm_variants_count; }

static int by_prelude(const void *key, const void *entry)
{
    const jg__hash128 *a = key, *b = &((const jg__llvm_variant *)entry)->prelude;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* The key's variant in the catalog, or NULL. */
static const jg__llvm_variant *find_variant(const jg__gemm_key *key)
{
    if (!jg__spec_supported(key))
        return NULL;
    jg__buf prelude = {0};
    jg__emit_gemm_spec(key, false, &prelude);
    const jg__llvm_variant *v = NULL;
    if (!prelude.failed) {
        XXH128_hash_t x = XXH3_128bits(prelude.data, prelude.len);
        jg__hash128 h = {x.low64, x.high64};
        v = bsearch(&h, jg__llvm_variants, jg__llvm_variants_count, sizeof *v, by_prelude);
    }
    jg__buf_free(&prelude);
    return v;
}

bool jg__llvm_serves(const jg__gemm_key *key) { return find_variant(key) != NULL; }

/* LLVM's diagnostics go to the compile's log: without a handler, an error
 * (an inline asm that the NVPTX target rejects) would print and exit. */
typedef struct diagnostics {
    jg__buf *log;
    bool error;
} diagnostics;

static void on_diagnostic(LLVMDiagnosticInfoRef d, void *user)
{
    diagnostics *diag = user;
    if (LLVMGetDiagInfoSeverity(d) != LLVMDSError)
        return;
    char *text = LLVMGetDiagInfoDescription(d);
    jg__buf_printf(diag->log, "LLVM: %s\n", text ? text : "error");
    LLVMDisposeMessage(text);
    diag->error = true;
}

/* Moves an LLVM message into the log and frees it. */
static void take_message(jg__buf *log, const char *what, char *msg)
{
    jg__buf_printf(log, "%s: %s", what, msg ? msg : "(no message)");
    LLVMDisposeMessage(msg);
}

static void take_error(jg__buf *log, const char *what, LLVMErrorRef err)
{
    take_message(log, what, LLVMGetErrorMessage(err));
}

/* Every function the kernel calls is inlined into it, as NVVM does: the
 * templates' lambdas (FP8's chunk of stages, run in a loop) are otherwise
 * too large for LLVM's inliner, and the accumulator arrays they take by
 * reference then live in local memory (768 bytes in a 64x72 FP8 kernel). */
static void inline_all(LLVMContextRef c, LLVMModuleRef mod, LLVMValueRef kernel)
{
    const unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    const unsigned never = LLVMGetEnumAttributeKindForName("noinline", 8);
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        if (f == kernel || LLVMIsDeclaration(f))
            continue;
        LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, never);
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c, always, 0));
    }
}

/* The sizes become internal constants (the optimizer folds them), the
 * kernel gets its name, and its parameter is marked grid_constant: TMA
 * reads the tensor maps in the parameter space, never a local copy. */
static bool specialize(LLVMContextRef c, LLVMModuleRef mod, const jg__gemm_key *key,
                       const char *name, jg__buf *log)
{
    static const char *const globals[] = {JG_SPEC_M, JG_SPEC_N, JG_SPEC_K};
    int64_t values[3];
    jg__spec_values(key, values);
    for (size_t i = 0; i < JG_ARRAY_LEN(globals); ++i) {
        LLVMValueRef g = LLVMGetNamedGlobal(mod, globals[i]);
        if (!g)
            continue;
        LLVMSetInitializer(g, LLVMConstInt(LLVMInt32TypeInContext(c), (uint64_t)values[i], 1));
        LLVMSetLinkage(g, LLVMInternalLinkage);
        LLVMSetGlobalConstant(g, 1);
    }
    LLVMValueRef fn = LLVMGetNamedFunction(mod, JG_SPEC_KERNEL);
    if (!fn) {
        jg__buf_printf(log, "the variant's bitcode has no %s", JG_SPEC_KERNEL);
        return false;
    }
    inline_all(c, mod, fn);
    LLVMSetValueName2(fn, name, strlen(name));
    static const char annotation[] = "grid_constant";
    LLVMMetadataRef params[] = {LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0))};
    LLVMMetadataRef entry[] = {LLVMValueAsMetadata(fn),
                               LLVMMDStringInContext2(c, annotation, sizeof annotation - 1),
                               LLVMMDNodeInContext2(c, params, 1)};
    LLVMAddNamedMetadataOperand(mod, "nvvm.annotations",
                                LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, entry, 3)));
    return true;
}

/* Optimizes the module and writes its PTX (and, for dumps, its IR). */
static jg_status lower(LLVMModuleRef mod, const char *arch, jg__buf *ptx, jg__buf *ir,
                       jg__buf *log)
{
    pthread_once(&target_once, target_init);
    char *msg = NULL;
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(JG_LLVM_TRIPLE, &target, &msg)) {
        take_message(log, "LLVMGetTargetFromTriple", msg);
        return JG_ERR_COMPILE;
    }
    char cpu[16];
    snprintf(cpu, sizeof cpu, "%s", arch); /* "sm_90a": LLVM's name for the same target */
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(target, JG_LLVM_TRIPLE, cpu, JG_LLVM_FEATURES,
                                LLVMCodeGenLevelAggressive, LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm) {
        jg__buf_printf(log, "LLVMCreateTargetMachine(%s) failed", cpu);
        return JG_ERR_COMPILE;
    }
    jg_status st = JG_OK;
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(mod, JG_LLVM_PASSES, tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (err) {
        take_error(log, "LLVMRunPasses", err);
        st = JG_ERR_COMPILE;
    }
    if (st == JG_OK && ir) {
        char *text = LLVMPrintModuleToString(mod);
        jg__buf_puts(ir, text);
        LLVMDisposeMessage(text);
    }
    LLVMMemoryBufferRef out = NULL;
    if (st == JG_OK && LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &out)) {
        take_message(log, "LLVMTargetMachineEmitToMemoryBuffer", msg);
        st = JG_ERR_COMPILE;
    }
    if (out) {
        jg__buf_append(ptx, LLVMGetBufferStart(out), LLVMGetBufferSize(out));
        LLVMDisposeMemoryBuffer(out);
    }
    LLVMDisposeTargetMachine(tm);
    return st == JG_OK && ptx->failed ? JG_ERR_NO_MEMORY : st;
}

jg_status jg__llvm_compile(const jg__gemm_key *key, const char *name, const char *arch,
                           jg__buf *ptx, jg__buf *ir, jg__buf *log)
{
    const jg__llvm_variant *v = find_variant(key);
    if (!v)
        return JG_ERR_UNSUPPORTED;
    LLVMContextRef c = LLVMContextCreate();
    diagnostics diag = {log, false};
    LLVMContextSetDiagnosticHandler(c, on_diagnostic, &diag);
    LLVMMemoryBufferRef bc = LLVMCreateMemoryBufferWithMemoryRange(
        (const char *)v->bitcode, v->len, "variant", 0);
    LLVMModuleRef mod = NULL;
    jg_status st = JG_OK;
    if (LLVMParseBitcodeInContext2(c, bc, &mod)) {
        jg__buf_printf(log, "LLVMParseBitcodeInContext2: the variant's bitcode is not readable");
        st = JG_ERR_COMPILE;
    }
    LLVMDisposeMemoryBuffer(bc); /* parsed whole: the module keeps no reference to it */
    if (st == JG_OK && !specialize(c, mod, key, name, log))
        st = JG_ERR_COMPILE;
    if (st == JG_OK)
        st = lower(mod, arch, ptx, ir, log);
    if (st == JG_OK && diag.error)
        st = JG_ERR_COMPILE;
    if (mod)
        LLVMDisposeModule(mod);
    LLVMContextDispose(c);
    if (st == JG_OK)
        jg__buf_append(ptx, "", 1); /* the driver reads PTX as a NUL-terminated string */
    return st == JG_OK && ptx->failed ? JG_ERR_NO_MEMORY : st;
}

bool jg__llvm_built(void) { return true; }
