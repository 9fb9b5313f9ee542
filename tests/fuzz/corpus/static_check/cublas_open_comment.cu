#include <cublas_v2.h>
/* unterminated comment
