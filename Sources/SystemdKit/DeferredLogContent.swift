/// The messages and fields of one or more events, made on the log writer's thread
/// (`Logger.Batch.append(_:_:deferred:)`) when they are written: a class, so the queue holds
/// one reference for all of them (an event loop's denials since its last hand-off are one
/// entry, not one per denial).
///
/// `logContent(_:)` must be pure: it may run any time later, on another thread, or never
/// (the events dropped or below `minimumPriority`).
public protocol DeferredLogContent: AnyObject, Sendable {
    /// How many events it makes.
    var eventCount: Int { get }
    /// Event `index`'s message and fields, `index` in `0..<eventCount`.
    func logContent(_ index: Int) -> (message: String, fields: [(String, String)])
}
