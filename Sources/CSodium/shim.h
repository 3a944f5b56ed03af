// libsodium, Debian's libsodium-dev. Only ProctorCrypto imports this module.
#include <sodium.h>
