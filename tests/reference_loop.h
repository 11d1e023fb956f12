// LIBANE_REFERENCE_LOOP marks a reference's hot loop, to be left
// uninstrumented in the sanitizer build: it is test code that checks the
// library, and instrumenting it only multiplies the suite's time (the direct
// convolution was 46% of the sanitized conv record tests). The library and
// the rest of each test stay instrumented.
#pragma once

#if defined(__clang__)
#define LIBANE_REFERENCE_LOOP __attribute__((no_sanitize("address", "undefined", "coverage")))
#else
#define LIBANE_REFERENCE_LOOP
#endif
