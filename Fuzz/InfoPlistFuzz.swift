// libFuzzer target for ProctorKit's Info.plist reader: `InfoPlist.parse` (Foundation's
// PropertyListSerialization, XML or binary) and what ApplicationMain and PolicyApplication
// then read from the dictionary (`principalClassName`, `PolicyAppSettings.resolve`).
// Properties: any bytes give a dictionary or a `Failure` naming the file; so does every
// lookup in an accepted dictionary. ProctorKit is too heavy to build whole with the fuzzer
// instrumentation, so `Fuzz/build.sh info-plist` compiles the two files this needs into
// the target. Foundation itself is not instrumented: libFuzzer sees coverage only in
// Proctor's code, so the seeds (XML, binary, OpenStep plists) carry the search.
import Foundation

private let path = "fuzz/Info.plist"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let plist: InfoPlist
    do {
        plist = try InfoPlist.parse(Data(bytes: data, count: size), path: path)
    } catch {
        check(error.path == path && !error.problem.isEmpty, "a refused Info.plist must name the file and why: \(error)")
        return 0
    }
    do {
        if let name = try plist.principalClassName() { check(!name.isEmpty, "an empty NSPrincipalClass was accepted") }
    } catch {
        check(error.path == path, "an NSPrincipalClass problem must name the file: \(error)")
    }
    do {
        let settings = try PolicyAppSettings.resolve(info: plist.dictionary, appID: nil, version: nil,
                                                     dataDirectories: nil, infoPlistPath: path)
        check(!settings.appID.isEmpty, "an empty app id was accepted")
    } catch {
        check(!error.description.isEmpty, "a refused setting must say why")
    }
    return 0
}
