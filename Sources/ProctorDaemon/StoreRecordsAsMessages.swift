import JSONCore
import ProctorProtocol
import ProctorStore

/// The state store's records as the Admin interface shows them: times in RFC 3339.
extension Admin.Registration {
    init(_ record: RegistrationRecord) {
        self.init(at: Clock.rfc3339(record.at), version: record.appVersion, pid: Int(record.pid), uid: Int(record.uid))
    }
}

extension Admin.Feedback {
    init(_ record: FeedbackRecord) {
        let severity: Agent.FeedbackSeverity = switch record.severity {
        case .info: .info
        case .error: .error
        }
        self.init(key: record.key, severity: severity, message: record.message,
                  data: record.data.flatMap { try? JSONParser.parse($0) }?.objectValue, at: Clock.rfc3339(record.at))
    }
}

extension Admin.PolicyAcknowledgement {
    init(_ record: ProctorStore.PolicyAcknowledgement) {
        let status: Status = switch record.status {
        case .applied: .applied
        case .error: .error
        case .unsupported: .unsupported
        }
        self.init(policyVersion: record.policyVersion, status: status, at: Clock.rfc3339(record.at))
    }
}

extension Admin.WipeRecord {
    init(_ record: ProctorStore.WipeDirective) {
        let state: State = switch record.state {
        case .issued: .issued
        case .delivered: .delivered
        case .completed: .completed
        }
        self.init(id: record.id, issuedAt: Clock.rfc3339(record.issuedAt), issuedByUid: Int(record.issuedByUID), state: state,
                  deliveredAt: record.deliveredAt.map(Clock.rfc3339), completedAt: record.completedAt.map(Clock.rfc3339))
    }
}

extension Admin.HistoryEntry.Kind {
    init(_ kind: BundleChangeKind) {
        self = switch kind {
        case .apply: .apply
        case .rollback: .rollback
        }
    }
}
