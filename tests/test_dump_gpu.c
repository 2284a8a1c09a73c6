#include "ensure.h"
static void nothing(void) {}
static const ensure_test tests[] = {{"nothing", nothing}};
ENSURE_MAIN(tests)
