import Crypto
import Foundation
import Mustache

/// The web view's templates, style and script: compiled into the lobby binary (`embedInCode` in
/// Package.swift) and parsed once, when the router is built.
struct WebTemplates: Sendable {
    private let library: MustacheLibrary

    static let stylesheet = PackageResources.nearplay_css
    static let screenScript = PackageResources.screen_js

    init() {
        var library = MustacheLibrary()
        let templates: [(String, [UInt8])] = [
            ("layout", PackageResources.layout_mustache),
            ("location", PackageResources.location_mustache),
            ("location-board", PackageResources.location_board_mustache),
            ("player", PackageResources.player_mustache),
            ("sign-in", PackageResources.sign_in_mustache),
            ("message", PackageResources.message_mustache),
        ]
        for (name, bytes) in templates {
            let text = String(decoding: bytes, as: UTF8.self)
                .replacingOccurrences(of: "/static/nearplay.css", with: "/static/nearplay.css?v=\(Self.version(Self.stylesheet))")
                .replacingOccurrences(of: "/static/screen.js", with: "/static/screen.js?v=\(Self.version(Self.screenScript))")
            do {
                try library.register(text, named: name)
            } catch {
                // The templates are part of the binary; WebViewTests render every one of them.
                preconditionFailure("The web view's template \(name).mustache does not parse: \(error)")
            }
        }
        self.library = library
    }

    /// A short hash of an asset's bytes, for its address in the pages.
    static func version(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// `template` rendered with `object` (values are HTML-escaped unless a template says `{{{…}}}`).
    func render(_ template: String, _ object: Any) -> String {
        guard let text = library.render(object, withTemplate: template) else {
            preconditionFailure("The web view has no template named \(template).")
        }
        return text
    }
}
