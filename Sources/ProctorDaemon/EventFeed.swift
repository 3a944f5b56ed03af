import JSONCore
import ProctorProtocol
import Varlink

/// `Admin.Events` subscribers and what they asked for. Nothing is built for an event
/// nobody listens to, so decisions cost nothing extra while no admin is watching.
final class EventFeed {
    private struct Subscriber {
        let appID: String?
        let kinds: Set<String>?
        let handle: VarlinkReplyHandle
    }

    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    /// Most concurrent `Events` streams (each holds a connection's output buffer).
    let maxSubscribers = 64

    var isEmpty: Bool { subscribers.isEmpty }

    /// Adds a stream; false when `maxSubscribers` are already open.
    func add(appID: String?, kinds: Set<String>?, handle: VarlinkReplyHandle) -> Bool {
        guard subscribers.count < maxSubscribers else { return false }
        let key = ObjectIdentifier(handle)
        subscribers[key] = Subscriber(appID: appID, kinds: kinds, handle: handle)
        handle.onCancel = { [weak self] in self?.subscribers[key] = nil }
        return true
    }

    /// Sends an event to every subscriber whose filter matches. `data` is built only
    /// when someone will receive it.
    func emit(kind: String, appID: String?, data: @autoclosure () -> [String: JSONValue]) {
        guard !subscribers.isEmpty else { return }
        var event: [String: JSONValue]?
        for (key, subscriber) in subscribers {
            if let wanted = subscriber.appID, wanted != appID { continue }
            if let kinds = subscriber.kinds, !kinds.contains(kind) { continue }
            guard subscriber.handle.isConnected else {
                subscribers[key] = nil
                continue
            }
            if event == nil {
                event = Admin.Events.Reply(event: Admin.Event(at: Clock.rfc3339(Clock.now()), kind: kind, appId: appID,
                                                              data: data())).fields
            }
            subscriber.handle.send(event!)
        }
    }
}
