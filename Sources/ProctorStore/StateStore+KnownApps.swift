import JSONCore

/// The apps the store holds anything about (`knownApps()`), kept in memory once read, so the
/// daemon can count them without a query each time: `Admin.Status` is a call an admin client
/// may make at will, and the query grows with the fleet.
extension StateStore {
    /// How many app ids the store holds anything about. The first call reads them (one
    /// query); later calls read memory, which this connection's writes keep exact: each write
    /// that names an app notes it once its transaction commits. No other connection writes:
    /// proctord holds the state directory's lock.
    public func knownAppCount() throws(StoreError) -> Int {
        try loadedKnownApps().inOrder.count
    }

    /// The known app ids from position `start` of the order in which this connection learnt
    /// them (`0..<knownAppCount()`): the ones read first, then each new one as it was
    /// written. A caller that has counted up to `start` sees only what is new since.
    public func knownApps(from start: Int) throws(StoreError) -> ArraySlice<String> {
        try loadedKnownApps().inOrder[start...]
    }

    private func loadedKnownApps() throws(StoreError) -> KnownAppLedger {
        if let knownAppLedger { return knownAppLedger }
        let ledger = KnownAppLedger(try knownApps())
        knownAppLedger = ledger
        return ledger
    }

    /// Notes that a committed write named `appID`: a no-op until the ledger is read (the
    /// read will find it in the database).
    func noteKnown(_ appID: String) {
        knownAppLedger?.note(appID)
    }
}

/// Each app id once, in the order it became known. Ids are compared by their bytes, as
/// SQLite's `UNION` compares them (Swift's `String ==` takes canonically equivalent
/// spellings for one); the set shares each id's storage with the array.
struct KnownAppLedger {
    private(set) var inOrder: [String]
    private var members: Set<ByteExactString>

    init(_ appIDs: [String]) {
        inOrder = []
        members = Set(minimumCapacity: appIDs.count)
        for appID in appIDs { note(appID) }
    }

    mutating func note(_ appID: String) {
        if members.insert(ByteExactString(appID)).inserted { inOrder.append(appID) }
    }
}
