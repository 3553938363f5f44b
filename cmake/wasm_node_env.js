// --pre-js of the WebAssembly executables run under node (tests, benchmarks): getenv() sees the
// host's environment (TRUENO_BACKEND, TRUENO_THREADS, TRUENO_TEST_SEED, ...), as a native run would.
// emscripten's own ENV is otherwise a fixed browser-like set.
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () { Object.assign(ENV, process.env); });
