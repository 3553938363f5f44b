// The page reads and writes wasm memory through views made fresh each time (memory grows, and with
// threads it is a SharedArrayBuffer that Module.HEAPU8 may not follow): Module.memoryBuffer() is it.
Module['memoryBuffer'] = function () { return wasmMemory.buffer; };
