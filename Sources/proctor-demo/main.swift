// proctor-demo: a small managed "notes" service showing ProctorKit's two ways in.
//
//   proctor-demo                 the declarative method: Info.plist's NSPrincipalClass
//                                (ProctorKit.PolicyApplication) picks the application class
//   proctor-demo --code-method   the code method: main.swift names PolicyApplication itself
//
// See docs/sdk.md ("The demo") for running it against `make run`.
import Foundation

#if canImport(ProctorKit)
import ProctorKit

if CommandLine.arguments.contains("--code-method") {
    // Nothing comes from the Info.plist's NSPrincipalClass; the app id is set in code too
    // (the Info.plist, when found, still supplies the version and data directories).
    PolicyApplication.appID = NotesDelegate.appID
    ApplicationMain(CommandLine.argc, CommandLine.unsafeArgv, "ProctorKit.PolicyApplication", "NotesDelegate")
} else {
    ApplicationMain(CommandLine.argc, CommandLine.unsafeArgv, nil, "NotesDelegate")
}
#else
print("proctor-demo was built without ProctorKit: it runs unmanaged and has nothing to show")
#endif
