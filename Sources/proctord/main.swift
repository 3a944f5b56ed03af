import Glibc
import LinuxIO
import ProctorDaemon

exit(runProctord(arguments: Array(CommandLine.arguments.dropFirst()), environment: processEnvironment()))
