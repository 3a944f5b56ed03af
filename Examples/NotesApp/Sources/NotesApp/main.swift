// notes: the application class comes from Info.plist (NSPrincipalClass names
// ProctorKit.PolicyApplication), the delegate from here. Everything else is NotesDelegate.
import ProctorKit

ApplicationMain(CommandLine.argc, CommandLine.unsafeArgv, nil, "NotesDelegate")
