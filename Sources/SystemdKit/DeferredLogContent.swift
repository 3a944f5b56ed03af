/// What an event's message and fields are made from on the log writer's thread
/// (`Logger.Batch.append(_:_:deferred:)`), when the event is written: a class, so the
/// queue holds one reference, and the caller may share it with other readers (a denial's
/// record is also its history event).
///
/// `logContent()` must be pure: it may run any time later, on another thread, or never
/// (the event dropped or below `minimumPriority`).
public protocol DeferredLogContent: AnyObject, Sendable {
    func logContent() -> (message: String, fields: [(String, String)])
}
