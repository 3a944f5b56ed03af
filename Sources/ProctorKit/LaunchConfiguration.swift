/// The classes `ApplicationMain` runs, resolved from its arguments and the Info.plist.
@MainActor
struct LaunchConfiguration {
    /// Why the classes could not be resolved; each case has its own exit status.
    enum Failure: Error, CustomStringConvertible, Equatable {
        case invalidInfoPlist(InfoPlist.Failure)
        case classNotFound(role: String, name: String, origin: ClassNameOrigin, tried: [String])
        case notAnApplicationClass(name: String, origin: ClassNameOrigin)
        case notADelegateClass(name: String, origin: ClassNameOrigin)

        var description: String {
            switch self {
            case .invalidInfoPlist(let failure):
                return failure.description
            case .classNotFound(let role, let name, let origin, let tried):
                let attempts = tried.isEmpty ? "it is not a valid class name (expected Class or Module.Class)" : "tried \(tried.joined(separator: ", "))"
                return "\(role) class '\(name)' (\(origin)) not found: \(attempts)"
            case .notAnApplicationClass(let name, let origin):
                return "principal class '\(name)' (\(origin)) is not Application or a subclass of it"
            case .notADelegateClass(let name, let origin):
                return "delegate class '\(name)' (\(origin)) does not conform to ApplicationDelegate"
            }
        }

        var exitStatus: ApplicationExitStatus {
            switch self {
            case .invalidInfoPlist: .invalidInfoPlist
            case .classNotFound: .classNotFound
            case .notAnApplicationClass: .notAnApplicationClass
            case .notADelegateClass: .notADelegateClass
            }
        }
    }

    let applicationClass: Application.Type
    let delegateClass: (any ApplicationDelegate.Type)?

    /// An explicit `principalClassName` wins; else `NSPrincipalClass` of `infoPlist`; else
    /// `Application`. A delegate class is used only when named.
    static func resolve(principalClassName: String?,
                        delegateClassName: String?,
                        infoPlist: InfoPlist?,
                        resolver: ClassResolver) throws(Failure) -> LaunchConfiguration {
        var principal: (name: String, origin: ClassNameOrigin)?
        if let principalClassName {
            principal = (principalClassName, .argument("principalClassName"))
        } else if let infoPlist {
            do {
                if let name = try infoPlist.principalClassName() { principal = (name, .infoPlist(path: infoPlist.path)) }
            } catch {
                throw .invalidInfoPlist(error)
            }
        }

        var applicationClass: Application.Type = Application.self
        if let principal {
            guard let found = resolver.resolve(principal.name) else {
                throw .classNotFound(role: "principal", name: principal.name, origin: principal.origin,
                                     tried: resolver.candidates(for: principal.name))
            }
            guard let subclass = found as? Application.Type else {
                throw .notAnApplicationClass(name: principal.name, origin: principal.origin)
            }
            applicationClass = subclass
        }

        var delegateClass: (any ApplicationDelegate.Type)?
        if let delegateClassName {
            let origin = ClassNameOrigin.argument("delegateClassName")
            guard let found = resolver.resolve(delegateClassName) else {
                throw .classNotFound(role: "delegate", name: delegateClassName, origin: origin,
                                     tried: resolver.candidates(for: delegateClassName))
            }
            guard let conforming = found as? any ApplicationDelegate.Type else {
                throw .notADelegateClass(name: delegateClassName, origin: origin)
            }
            delegateClass = conforming
        }
        return LaunchConfiguration(applicationClass: applicationClass, delegateClass: delegateClass)
    }
}
