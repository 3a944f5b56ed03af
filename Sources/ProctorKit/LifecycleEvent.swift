/// The lifecycle events `Application` derives from signals, the login session and memory
/// pressure, in the order the state machine hands them out.
enum LifecycleEvent: Equatable, Sendable {
    case didBecomeActive
    case willResignActive
    case didEnterBackground
    case willEnterForeground
    case willTerminate
    case didReceiveMemoryWarning
    case userDidChange
    case didReceiveReload
}
