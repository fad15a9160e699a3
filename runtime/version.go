package runtime

// SupportPackageIsVersion1 is referenced by generated code
// (`const _ = runtime.SupportPackageIsVersion1`). A runtime that no longer
// supports the code a generator emitted drops the constant, and the
// generated package stops compiling instead of misbehaving.
const SupportPackageIsVersion1 = true
