/// The image formats accepted as profile photos, recognised by their first bytes (never by a
/// declared content type).
public enum ImageKind: String, Sendable {
    case jpeg = "image/jpeg"
    case png = "image/png"

    /// The format of `bytes`, or nil when they start like neither a JPEG nor a PNG file.
    public init?<Bytes: Collection>(sniffing bytes: Bytes) where Bytes.Element == UInt8 {
        let head = Array(bytes.prefix(8))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            self = .png
        } else {
            return nil
        }
    }
}
