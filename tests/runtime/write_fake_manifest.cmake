# Writes MANIFEST from TEMPLATE with @LIBRARY_SHA256@ set to the SHA-256 of LIBRARY: the manifest
# attnc gen would write beside a fake kernel library, hashed by CMake (not by the runtime's code).
file(SHA256 "${LIBRARY}" LIBRARY_SHA256)
configure_file("${TEMPLATE}" "${MANIFEST}" @ONLY)
