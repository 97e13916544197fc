import Foundation
import Testing

/// Finds ../shared/data beside the repository (or $NEARPLAY_SHARED_DATA).
enum SharedData {
    static var folder: URL {
        if let path = ProcessInfo.processInfo.environment["NEARPLAY_SHARED_DATA"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/data")
    }

    /// The file's bytes; records an issue saying where the data was expected when it is missing.
    static func bytes(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        let url = folder.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            Issue.record("Missing \(url.path): these tests need the project's shared data folder beside the repository (../shared/data), or NEARPLAY_SHARED_DATA pointing at it.", sourceLocation: sourceLocation)
            throw CocoaError(.fileNoSuchFile)
        }
        return [UInt8](data)
    }

    static func json(_ name: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try bytes(name)))
    }
}
