// swift-tools-version:6.1
// Proctor: an MDM SDK and policy-enforcement daemon for Linux.
//
// Layers, bottom up (each depends only on those above it in this list):
//   C shims ........ CLinux (GNU-only libc declarations), CSystemd (libsystemd), CSQLite (libsqlite3),
//                    CSodium (libsodium), CCurl (libcurl), CKeyutils (libkeyutils), CLandlock (Landlock's ABI)
//   JSONCore ....... JSON values, a position-tracking parser, canonical serialisation
//   LinuxIO ........ descriptors, Unix sockets, peer credentials, the epoll event loop, atomic
//                    file replacement, Landlock
//   ProctorPolicy .. the policy language and decision engine: pure, no I/O except
//                    PolicyDirectory, which reads policy.d through LinuxIO
//   KernelKeyring .. keys in the kernel's keyrings (libkeyutils), with an expiry
//   ProctorCrypto .. the one crypto module (libsodium): signatures, keys, key wrapping, streams
//   ProctorBundle .. signed policy bundles (DSSE envelopes): signing, trusted keys, verification
//   ProctorFleet ... pulling bundles from an MDM: proctord.conf, the libcurl fetcher, the poll thread
//   Varlink ........ the Varlink protocol: framing, dispatch, server on LinuxIO, blocking client
//   SystemdKit ..... sd_notify, socket activation, the journal
//   ProctorStore ... durable state in SQLite
//   ProctorProtocol  the io.proctor.{Agent,Admin} interface files and a typed message per method, generated
//                    from them at build time (EmbedInterfaces plugin, generate-messages; what the interface
//                    text cannot say is in Sources/ProctorProtocol/Interfaces/SwiftMapping.txt)
//   ProctorDaemon .. proctord's logic; ProctorCTL: proctorctl's; ProctorKit: the SDK
//   ProctorKitTesting the SDK's test kit: ProctorKit against ProctorDaemon run in process
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
        // Headers only: ProctorFleet loads libcurl with dlopen when it first fetches (see shim.h).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // libm: JSONCore rounds numbers without Foundation, which would otherwise pull libm in.
        .target(name: "JSONCore", linkerSettings: [.linkedLibrary("m")]),
        .target(name: "LinuxIO", dependencies: ["CLinux", "CLandlock"]),
        .target(name: "ProctorPolicy", dependencies: ["JSONCore", "LinuxIO"]),
        .target(name: "KernelKeyring", dependencies: ["CKeyutils", "LinuxIO"]),
        .target(name: "ProctorCrypto", dependencies: ["CSodium", "LinuxIO"]),
        .target(name: "ProctorBundle", dependencies: ["ProctorPolicy", "ProctorCrypto", "JSONCore"]),
        .target(name: "ProctorFleet", dependencies: ["CCurl", "LinuxIO"]),
        .target(name: "Varlink", dependencies: ["JSONCore", "LinuxIO"]),
        .target(name: "SystemdKit", dependencies: ["CLinux", "LinuxIO"]),
        // ProctorPolicy for its limits only: a bundle the language accepts must fit the store.
        .target(name: "ProctorStore", dependencies: ["CSQLite", "JSONCore", "LinuxIO", "ProctorPolicy"]),
        .target(name: "ProctorProtocol", dependencies: ["JSONCore", "ProctorPolicy", "Varlink"],
                exclude: ["Interfaces"], plugins: ["EmbedInterfaces"]),
        .target(name: "ProctorDaemon",
                dependencies: ["ProctorProtocol", "ProctorPolicy", "Varlink", "LinuxIO", "SystemdKit", "ProctorStore", "JSONCore",
                               "ProctorBundle", "ProctorFleet", "ProctorCrypto"]),
        // Build-time only: the Varlink interface files become a Swift string table and the
        // message types (with Interfaces/SwiftMapping.txt for what their text cannot say).
        .executableTarget(name: "embed-text"),
        .executableTarget(name: "generate-messages"),
        .plugin(name: "EmbedInterfaces", capability: .buildTool(), dependencies: ["embed-text", "generate-messages"]),
        .target(name: "ProctorCTL", dependencies: ["ProctorProtocol", "ProctorPolicy", "Varlink", "JSONCore", "ProctorBundle",
                                                  "ProctorCrypto"]),
        .target(name: "ProctorKit", dependencies: ["ProctorProtocol", "ProctorPolicy", "Varlink", "SystemdKit", "JSONCore", "CSystemd",
                                                  "LinuxIO", "ProctorCrypto", "KernelKeyring"]),
        // The SDK's test kit runs proctord's own code (ProctorDaemon) inside the test process.
        .target(name: "ProctorKitTesting", dependencies: ["ProctorKit", "ProctorDaemon", "ProctorProtocol", "ProctorPolicy", "JSONCore",
                                                         "Varlink", "ProctorCrypto", "LinuxIO"]),
        // What the tests and proctor-bench share: temporary directories, child processes, a notify socket, a seeded generator.
        .target(name: "TestSupport", dependencies: ["CLinux", "LinuxIO"]),

        .executableTarget(name: "proctord", dependencies: ["ProctorDaemon", "LinuxIO"]),
        .executableTarget(name: "proctorctl", dependencies: ["ProctorCTL", "LinuxIO"]),
        .executableTarget(name: "proctor-demo", dependencies: ["ProctorKit", "ProctorPolicy", "JSONCore"], exclude: ["Info.plist"]),
        .executableTarget(name: "proctor-kit-testapp", dependencies: ["ProctorKit", "ProctorPolicy", "JSONCore"]),
        .executableTarget(name: "proctor-bench",
                          dependencies: ["CLinux", "ProctorPolicy", "LinuxIO", "JSONCore", "ProctorKit", "ProctorCrypto",
                                         "ProctorKitTesting", "ProctorBundle", "ProctorStore", "TestSupport"]),
        // Used only by the real-systemd tests in Tests/systemd.
        .executableTarget(name: "systemdkit-probe", dependencies: ["SystemdKit", "CLinux"], path: "Tests/systemd/probe"),

        .testTarget(name: "JSONCoreTests", dependencies: ["JSONCore"]),
        .testTarget(name: "ProctorPolicyTests", dependencies: ["ProctorPolicy", "JSONCore", "TestSupport"]),
        .testTarget(name: "LinuxIOTests", dependencies: ["LinuxIO", "CLinux", "TestSupport"]),
        .testTarget(name: "LandlockTests", dependencies: ["CLandlock", "LinuxIO", "TestSupport"]),
        .testTarget(name: "ProctorCryptoTests", dependencies: ["ProctorCrypto", "LinuxIO", "TestSupport"]),
        .testTarget(name: "ProctorBundleTests", dependencies: ["ProctorBundle", "ProctorCrypto", "ProctorPolicy", "JSONCore",
                                                             "TestSupport"]),
        .testTarget(name: "ProctorFleetTests", dependencies: ["ProctorFleet", "TestSupport"], exclude: ["bundle_server.py"]),
        .testTarget(name: "KernelKeyringTests", dependencies: ["KernelKeyring", "LinuxIO", "TestSupport"]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink", "JSONCore", "LinuxIO"]),
        .testTarget(name: "SystemdKitTests", dependencies: ["SystemdKit", "LinuxIO"]),
        .testTarget(name: "ProctorStoreTests", dependencies: ["ProctorStore", "JSONCore", "ProctorPolicy", "CSQLite",
                                                             "TestSupport"]),
        // Runs the built generate-messages (the EmbedInterfaces plugin's tool) on small interfaces.
        .testTarget(name: "GenerateMessagesTests", dependencies: ["generate-messages", "TestSupport"]),
        .testTarget(name: "ProctorProtocolTests", dependencies: ["ProctorProtocol", "ProctorPolicy", "JSONCore", "Varlink"]),
        .testTarget(name: "ProctorCTLTests", dependencies: ["ProctorCTL", "ProctorPolicy", "JSONCore", "Varlink", "LinuxIO",
                                                          "ProctorBundle", "ProctorCrypto", "TestSupport"],
                    exclude: ["golden"]),
        .testTarget(name: "ProctorDaemonTests",
                    dependencies: ["ProctorDaemon", "ProctorPolicy", "ProctorProtocol", "ProctorStore", "TestSupport", "JSONCore",
                                   "LinuxIO", "ProctorCrypto", "Varlink"]),
        .testTarget(name: "ProctorKitTests",
                    dependencies: ["ProctorKit", "ProctorKitTesting", "ProctorProtocol", "TestSupport", "ProctorPolicy", "JSONCore",
                                   "Varlink", "ProctorCrypto", "LinuxIO"]),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
