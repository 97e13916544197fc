import Crypto
import Foundation
import Hummingbird

/// How the web view knows a signed-in browser, and how its forms are protected from other sites.
///
/// - The session is the API's own (`POST /v1/sessions` makes the same kind): its token travels in
///   the `nearplay_session` cookie, HttpOnly (no script reads it), SameSite=Strict (no other site's
///   page sends it) and Secure when the page came over TLS (a trusted proxy says so).
/// - Every form that changes something carries a CSRF token. A signed-in form's is derived from the
///   session token (an HMAC a page of another site cannot compute, as it cannot read the cookie);
///   the sign-in form, before there is a session, carries a random one that must equal the
///   `nearplay_csrf` cookie (double submit), so no other site can sign a browser in as someone else.
enum WebSession {
    static let sessionCookie = "nearplay_session"
    static let csrfCookie = "nearplay_csrf"

    /// The CSRF token of the forms of a session.
    static func csrfToken(session token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("nearplay web form".utf8), using: SymmetricKey(data: Data(token.utf8)))
        return Data(mac).prefix(20).map { String(format: "%02x", $0) }.joined()
    }

    /// A fresh random token for the sign-in form.
    static func newFormToken() -> String {
        (0..<20).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }

    /// Whether two tokens are equal, in time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard a.count == b.count, !a.isEmpty else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func cookie(_ name: String, _ value: String, maxAge: Int?, secure: Bool) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }

    /// A cookie that removes `name` from the browser.
    static func expired(_ name: String, secure: Bool) -> Cookie {
        Cookie(name: name, value: "", maxAge: 0, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}

/// An `application/x-www-form-urlencoded` body: what the web view's forms post.
struct FormBody {
    private var fields: [String: String] = [:]

    /// The largest form the web view takes (a username, a password and two tokens).
    static let maximumBytes = 4096

    init(_ request: Request) async throws {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            throw WebProblem(.unsupportedMediaType, "Unsupported form", "The form must be sent as application/x-www-form-urlencoded.")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: Self.maximumBytes)
        } catch {
            throw WebProblem(.contentTooLarge, "Form too large", "A form here is at most \(Self.maximumBytes) bytes.")
        }
        self.init(text: String(buffer: buffer))
    }

    init(text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String? {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            if fields[name] == nil { fields[name] = value }
        }
    }

    subscript(_ name: String) -> String? { fields[name] }
}

/// A web page's refusal: its status, a heading and a sentence that says what to do. Rendered as
/// an HTML page (``WebPageMiddleware``), never as the API's JSON.
struct WebProblem: Error {
    var status: HTTPResponse.Status
    var heading: String
    var message: String
    var link: (href: String, text: String)? = nil
    var retryAfter: Int? = nil

    init(_ status: HTTPResponse.Status, _ heading: String, _ message: String, link: (href: String, text: String)? = nil) {
        self.status = status
        self.heading = heading
        self.message = message
        self.link = link
    }
}
