// Lint test fixture: never compiled by the lint tests.
#include <kevo/kernel.h>
KEVO_EXPORT int kevo_forward(const kevo_args*) { return 1; }
