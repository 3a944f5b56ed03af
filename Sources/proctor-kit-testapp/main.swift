// The application ProctorKit's tests run as a child process. It logs every delegate call,
// and every event its application subclass sees first, as one line on standard output.
//
// Environment (so the tests can pick each path of ApplicationMain):
//   TESTAPP_PRINCIPAL             principalClassName argument (unset: nil, so Info.plist decides)
//   TESTAPP_DELEGATE              delegateClassName argument (unset: LoggingDelegate; empty: nil)
//   TESTAPP_DECLINE_LAUNCH        "1": didFinishLaunching returns false
//   TESTAPP_PRINT_INFO_KEY        log `info KEY=value` from Application.infoDictionary at launch
//   TESTAPP_REPORT_CHILD_SIGNALS  "1": at launch, log a child process's blocked/ignored signals
//   TESTAPP_PRINT_CONFIG          "1": at launch, log `config <json>` (the managed configuration)
//   TESTAPP_PROTECTED_NOTE        at launch, log the protected file `note` (ProtectedStorage.shared)
//                                 and replace it with this text
//   TESTAPP_DATAGUARD_CASES       a JSON array of data actions: at launch and on SIGHUP, log
//                                 DataGuard's answer to each (PolicyApplication)
//   TESTAPP_POLICY_ANSWER         `applied`, `error:REASON` or `unsupported:REASON`: the delegate's
//                                 acknowledgement of each policy version (PolicyApplication)
//   TESTAPP_WRITE_PATHS           a JSON array of paths: at launch and on SIGHUP, create each file
//                                 from the main thread and a Dispatch worker and log the outcomes
//   TESTAPP_FEEDBACK              a JSON object {"key", "message", "data"}: at launch, reported
//                                 with PolicyApplication.reportFeedback (severity info)
//
// The main is written the way docs/sdk.md tells apps to adopt the SDK in code.
import Foundation

#if canImport(ProctorKit)
import ProctorKit

let environment = ProcessInfo.processInfo.environment
let delegateName = environment["TESTAPP_DELEGATE"] ?? "LoggingDelegate"
ApplicationMain(CommandLine.argc, CommandLine.unsafeArgv,
                environment["TESTAPP_PRINCIPAL"],
                delegateName.isEmpty ? nil : delegateName)
#else
print("built without ProctorKit")
#endif
