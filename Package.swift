// swift-tools-version:6.1
// Proctor: an MDM SDK and policy-enforcement daemon for Linux.
//
// Layers, bottom up (each depends only on those above it in this list):
//   C shims ........ CLinux (GNU-only libc declarations), CSystemd (libsystemd), CSQLite (libsqlite3),
//                    CSodium (libsodium), CCurl (libcurl), CKeyutils (libkeyutils), CLandlock (Landlock's ABI)
//   JSONCore ....... JSON values, a position-tracking parser, canonical serialisation
//   ProctorPolicy .. the policy language and decision engine: pure, no I/O
//   LinuxIO ........ descriptors, Unix sockets, peer credentials, the epoll event loop, atomic
//                    file replacement, Landlock
//   KernelKeyring .. keys in the kernel's keyrings (libkeyutils), with an expiry
//   ProctorCrypto .. the one crypto module (libsodium): signatures, keys, key wrapping, streams
//   ProctorBundle .. signed policy bundles (DSSE envelopes): signing, trusted keys, verification
//   ProctorFleet ... pulling bundles from an MDM: proctord.conf, the libcurl fetcher, the poll thread
//   Varlink ........ the Varlink protocol: framing, dispatch, server on LinuxIO, blocking client
//   SystemdKit ..... sd_notify, socket activation, the journal
//   ProctorStore ... durable state in SQLite
//   ProctorDaemon .. proctord's logic; ProctorCTL: proctorctl's; ProctorKit: the SDK
//   executables .... thin mains over the libraries above
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Proctor",
    products: [
        .library(name: "ProctorKit", targets: ["ProctorKit"]),
        .library(name: "ProctorKitTesting", targets: ["ProctorKitTesting"]),
        .library(name: "ProctorPolicy", targets: ["ProctorPolicy"]),
        .library(name: "Varlink", targets: ["Varlink"]),
        .executable(name: "proctord", targets: ["proctord"]),
        .executable(name: "proctorctl", targets: ["proctorctl"]),
        .executable(name: "proctor-demo", targets: ["proctor-demo"]),
        .executable(name: "proctor-bench", targets: ["proctor-bench"]),
    ],
    targets: [
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CKeyutils", providers: [.apt(["libkeyutils-dev"])]),
        .systemLibrary(name: "CLandlock"),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // libm: JSONCore rounds numbers without Foundation, which would otherwise pull libm in.
        .target(name: "JSONCore", linkerSettings: [.linkedLibrary("m")]),
        .target(name: "ProctorPolicy", dependencies: ["JSONCore"]),
        .target(name: "LinuxIO", dependencies: ["CLinux", "CLandlock"]),
        .target(name: "KernelKeyring", dependencies: ["CKeyutils", "LinuxIO"]),
        .target(name: "ProctorCrypto", dependencies: ["CSodium", "LinuxIO"]),
        .target(name: "ProctorBundle", dependencies: ["ProctorPolicy", "ProctorCrypto", "JSONCore"]),
        .target(name: "ProctorFleet", dependencies: ["CCurl"]),
        .target(name: "Varlink", dependencies: ["JSONCore", "LinuxIO"]),
        .target(name: "SystemdKit", dependencies: ["CSystemd", "LinuxIO"]),
        .target(name: "ProctorStore", dependencies: ["CSQLite", "JSONCore"]),
        .target(name: "ProctorDaemon",
                dependencies: ["ProctorPolicy", "Varlink", "LinuxIO", "SystemdKit", "ProctorStore", "JSONCore"],
                exclude: ["Interfaces"], plugins: ["EmbedInterfaces"]),
        // Build-time only: the Varlink interface files become a Swift string table.
        .executableTarget(name: "embed-text"),
        .plugin(name: "EmbedInterfaces", capability: .buildTool(), dependencies: ["embed-text"]),
        .target(name: "ProctorCTL", dependencies: ["ProctorPolicy", "Varlink", "JSONCore", "ProctorBundle", "ProctorCrypto"]),
        .target(name: "ProctorKit", dependencies: ["ProctorPolicy", "Varlink", "SystemdKit", "JSONCore", "CSystemd", "LinuxIO",
                                                  "ProctorCrypto", "KernelKeyring"]),
        .target(name: "ProctorKitTesting", dependencies: ["ProctorKit", "ProctorPolicy", "JSONCore", "Varlink", "ProctorCrypto"]),
        .target(name: "TestSupport", dependencies: ["JSONCore"]),

        .executableTarget(name: "proctord", dependencies: ["ProctorDaemon"]),
        .executableTarget(name: "proctorctl", dependencies: ["ProctorCTL"]),
        .executableTarget(name: "proctor-demo", dependencies: ["ProctorKit", "ProctorPolicy", "JSONCore"], exclude: ["Info.plist"]),
        .executableTarget(name: "proctor-kit-testapp", dependencies: ["ProctorKit", "ProctorPolicy", "JSONCore"]),
        .executableTarget(name: "proctor-bench",
                          dependencies: ["ProctorPolicy", "Varlink", "LinuxIO", "JSONCore", "ProctorKit", "ProctorCrypto",
                                         "ProctorKitTesting"]),
        // Used only by the real-systemd tests in Tests/systemd.
        .executableTarget(name: "systemdkit-probe", dependencies: ["SystemdKit", "CLinux"], path: "Tests/systemd/probe"),

        .testTarget(name: "JSONCoreTests", dependencies: ["JSONCore"]),
        .testTarget(name: "ProctorPolicyTests", dependencies: ["ProctorPolicy", "JSONCore"]),
        .testTarget(name: "LinuxIOTests", dependencies: ["LinuxIO"]),
        .testTarget(name: "LandlockTests", dependencies: ["LinuxIO", "TestSupport"]),
        .testTarget(name: "ProctorCryptoTests", dependencies: ["ProctorCrypto", "LinuxIO", "TestSupport"]),
        .testTarget(name: "ProctorBundleTests", dependencies: ["ProctorBundle", "ProctorCrypto", "ProctorPolicy", "JSONCore",
                                                             "TestSupport"]),
        .testTarget(name: "ProctorFleetTests", dependencies: ["ProctorFleet", "TestSupport"], exclude: ["bundle_server.py"]),
        .testTarget(name: "KernelKeyringTests", dependencies: ["KernelKeyring", "LinuxIO", "TestSupport"]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink", "JSONCore", "LinuxIO"]),
        .testTarget(name: "SystemdKitTests", dependencies: ["SystemdKit"]),
        .testTarget(name: "ProctorStoreTests", dependencies: ["ProctorStore", "JSONCore"]),
        .testTarget(name: "ProctorCTLTests", dependencies: ["ProctorCTL", "ProctorPolicy", "JSONCore", "Varlink", "LinuxIO", "TestSupport",
                                                          "ProctorBundle", "ProctorCrypto"]),
        .testTarget(name: "ProctorDaemonTests", dependencies: ["ProctorDaemon", "ProctorPolicy", "JSONCore"]),
        .testTarget(name: "ProctorKitTests",
                    dependencies: ["ProctorKit", "ProctorKitTesting", "TestSupport", "ProctorPolicy", "JSONCore", "Varlink",
                                   "ProctorCrypto"]),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
