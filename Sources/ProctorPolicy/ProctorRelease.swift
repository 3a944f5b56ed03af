/// The release of Proctor. It lives in the lowest layer that proctord, proctorctl and the
/// SDK all build on, so `proctord --version`, `proctorctl --version` and the Varlink
/// service info always agree.
public enum ProctorRelease {
    public static let version = "0.1.0"
}
