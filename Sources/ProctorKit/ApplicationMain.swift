/// Runs the application, UIKit-style, and never returns.
///
/// - `principalClassName`: the application class, `Application` or a subclass, by name
///   (`Module.Class`; an unqualified name is tried in the calling module, the executable's
///   module and ProctorKit). When nil, `NSPrincipalClass` of the Info.plist names it (see
///   `InfoPlist` for where that is looked up); with neither, `Application`.
/// - `delegateClassName`: the `ApplicationDelegate` class, created with `init()`; nil for
///   none (the application class may set `delegate` itself).
///
/// Call it first thing in `main.swift`: it takes ownership of SIGTERM, SIGINT, SIGHUP,
/// SIGTSTP and SIGCONT by installing its own handlers for them. A name that does not
/// resolve, or an unreadable Info.plist, ends the process with one line on standard error
/// naming the class and where its name came from, and a distinct `ApplicationExitStatus`.
/// `fileID` identifies the caller's module; leave it to its default.
@MainActor
public func ApplicationMain(_ argc: Int32,
                            _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                            _ principalClassName: String?,
                            _ delegateClassName: String?,
                            fileID: String = #fileID) -> Never {
    let signals: SignalWatcher
    do {
        signals = try SignalWatcher()
    } catch {
        exit("cannot take ownership of the lifecycle signals (\(error))", status: .setupFailed)
    }
    let arguments = (0..<Int(argc)).compactMap { argv[$0].map { String(cString: $0) } }
    let executablePath = InfoPlist.executablePath()

    let configuration: LaunchConfiguration
    do {
        let infoPlist = try InfoPlist.locate(executablePath: executablePath)
        Application.infoDictionary = infoPlist?.dictionary ?? [:]
        Application.infoPlistPath = infoPlist?.path
        configuration = try LaunchConfiguration.resolve(
            principalClassName: principalClassName,
            delegateClassName: delegateClassName,
            infoPlist: infoPlist,
            resolver: ClassResolver(callerFileID: fileID, executablePath: executablePath))
    } catch let failure as InfoPlist.Failure {
        exit(failure.description, status: .invalidInfoPlist)
    } catch let failure as LaunchConfiguration.Failure {
        exit(failure.description, status: failure.exitStatus)
    } catch {
        exit("\(error)", status: .setupFailed)
    }

    let application = configuration.applicationClass.init()
    if let delegateClass = configuration.delegateClass {
        application.delegate = delegateClass.init()
    }
    application.run(arguments: arguments, signals: signals)
}
