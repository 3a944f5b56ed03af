#include <systemd/sd-login.h>
