import Glibc
import ProctorDaemon

exit(runProctord(arguments: Array(CommandLine.arguments.dropFirst())))
