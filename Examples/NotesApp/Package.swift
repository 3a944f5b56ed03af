// swift-tools-version:6.1
// NotesApp: a managed app built on ProctorKit, as a developer outside the Proctor package
// writes one. Copy this folder and change the path below to Proctor's URL and a version:
//     .package(url: "https://…/proctor.git", from: "…")
import PackageDescription

let package = Package(
    name: "NotesApp",
    products: [
        // The binary is `notes`; its module (what tests import) is `NotesApp`.
        .executable(name: "notes", targets: ["NotesApp"]),
    ],
    dependencies: [
        // `name:` lets the products below say `package: "Proctor"` whatever the checkout's folder is called.
        .package(name: "Proctor", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "NotesApp",
                          dependencies: [.product(name: "ProctorKit", package: "Proctor")],
                          exclude: ["Info.plist"]),
        .testTarget(name: "NotesAppTests",
                    dependencies: ["NotesApp", .product(name: "ProctorKitTesting", package: "Proctor")]),
    ]
)
