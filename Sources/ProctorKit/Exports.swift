// An app needs nothing but `import ProctorKit`: the modules whose types ProctorKit's public
// API mentions are re-exported — JSONCore (`JSONValue` in delegate callbacks and managed
// configuration) and ProctorPolicy (`Decision`, `Action`, `AppID`, `AppState` of
// DataGuard and PolicyApplication), ProctorProtocol (`FeedbackSeverity` is the Agent
// interface's own type) and ProctorCrypto (`SymmetricKey` of ProtectedStorage's key
// source). Only ProctorPolicy is a product of its own to depend on, so without this an
// outside package could not name them.
// `PublicAPITests` checks that every module ProctorKit imports publicly is listed here.
@_exported public import JSONCore
@_exported public import ProctorPolicy
@_exported public import ProctorProtocol
@_exported public import ProctorCrypto
