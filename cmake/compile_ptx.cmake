# Compiles one CUDA module to PTX with nvcc for the fallback path (NVRTC missing at run time), or, when
# nvcc fails, leaves an empty OUTPUT and a warning: the build never depends on nvcc working.
# Run as: cmake -DNVCC=... -DSOURCE=x.cu -DINCLUDE=dir -DOUTPUT=x.ptx -P this.
execute_process(COMMAND ${NVCC} --ptx -arch=compute_80 -std=c++17 -I${INCLUDE} -o ${OUTPUT}.tmp ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  file(RENAME ${OUTPUT}.tmp ${OUTPUT})
else()
  message(WARNING "nvcc could not compile ${SOURCE} to PTX (${rc}); no PTX fallback for it:\n${err}")
  file(WRITE ${OUTPUT} "")
endif()
