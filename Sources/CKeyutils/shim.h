// libkeyutils, Debian's libkeyutils-dev: the kernel key retention service (keyrings(7)).
#include <keyutils.h>
