import Dispatch
import Foundation
import Glibc

/// Debian's headless `chromium` driven through `chromedriver` over the W3C WebDriver protocol, for
/// the lobby's browser tests: just the commands those tests use, each one HTTP request to
/// chromedriver on a free port of 127.0.0.1.
///
/// Every browser runs from a temporary folder of its own (its profile, and the `HOME` and XDG
/// folders chromedriver and chromium see, so nothing lands in root's home) and ``quit()`` ends
/// every process it started and removes that folder. ``with(width:height:_:)`` quits however
/// the body ends; prefer it to ``start(width:height:chromium:chromedriver:readyTimeout:)``.
///
///     try await HeadlessBrowser.with { browser in
///         try await browser.open("http://127.0.0.1:\(port)/")
///         try await browser.find("input[name=name]").type("Ada")
///         try await browser.find("button[type=submit]").click()
///         let took = try await browser.waitFor { try await browser.title == "Hello, Ada" }
///     }
///
/// The requests go over a small HTTP/1.1 client of its own (``LoopbackHTTP``), not URLSession:
/// chromedriver writes its headers without a space after the colon (`Content-Length:250`), which
/// is valid HTTP but which FoundationNetworking up to Swift 6.3 rejects, failing every request
/// with "Failed writing header" (fixed by swift-corelibs-foundation pull request 5527, not yet
/// in a release here).
///
/// Failures throw ``WebDriverError`` with the command and chromedriver's own message. Finding an
/// element never waits (the session's implicit wait is 0): a page that is still changing is
/// waited for with ``waitFor(timeout:interval:_:)``, which says how long it took.
public final class HeadlessBrowser: @unchecked Sendable {
    /// The W3C key under which an element reference travels, in answers and in script arguments.
    public static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// chromedriver's port on 127.0.0.1.
    public let port: Int
    public let sessionID: String
    /// What the session reported, e.g. "156.0.8078.108".
    public let browserVersion: String
    /// The browser's temporary folder (profile, `HOME`, XDG folders), removed by ``quit()``.
    public let folder: String

    private let driver: SpawnedProcess
    private let lock = NSLock()
    private var ended = false

    private init(port: Int, sessionID: String, browserVersion: String, folder: String, driver: SpawnedProcess) {
        self.port = port
        self.sessionID = sessionID
        self.browserVersion = browserVersion
        self.folder = folder
        self.driver = driver
    }

    // MARK: - Starting and quitting

    /// Where Debian puts the programs. The real chromium binary comes before /usr/bin/chromium,
    /// the launcher script: the script sources /etc/chromium.d, which adds flags a test does not
    /// want (GPU rasterisation, extension loading) and, on machines where `findmnt` prints
    /// /dev/shm twice, complains "[: unexpected operator" on every start.
    static let chromiumCandidates = ["/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser"]
    static let chromedriverCandidates = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
    static let installHint = "apt-get install chromium chromium-driver (scripts/bootstrap installs them)"

    /// Starts chromedriver on a free port and a new chromium session with a `width` × `height`
    /// viewport (see ``setWindowSize(width:height:)``). The programs are Debian's unless
    /// `chromium` or `chromedriver` name others; throws ``TestEnvironmentError`` saying how to
    /// install them when they are missing, and ``WebDriverError`` (with chromedriver's output)
    /// when chromedriver is not ready within `readyTimeout` or the session cannot be created.
    /// About a second on an idle two-core machine, mostly chromium's start.
    public static func start(
        width: Int = 1280, height: Int = 800, chromium: String? = nil, chromedriver: String? = nil,
        readyTimeout: Duration = .seconds(60)
    ) async throws -> HeadlessBrowser {
        let fileManager = FileManager.default
        guard let browserPath = (chromium.map { [$0] } ?? chromiumCandidates).first(where: fileManager.isExecutableFile(atPath:)) else {
            throw TestEnvironmentError("chromium is not installed (looked for \(chromium ?? chromiumCandidates.joined(separator: ", "))): \(installHint)")
        }
        guard let driverPath = (chromedriver.map { [$0] } ?? chromedriverCandidates).first(where: fileManager.isExecutableFile(atPath:))
            ?? (chromedriver == nil ? findExecutable("chromedriver") : nil) else {
            throw TestEnvironmentError("chromedriver is not installed (looked for \(chromedriver ?? chromedriverCandidates.joined(separator: ", "))): \(installHint)")
        }

        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("nearplay-chromium-\(UUID().uuidString.prefix(8))").path
        for sub in ["profile", "home", "config", "cache", "tmp"] {
            try fileManager.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        // Both programs write outside the profile too: crashpad's database goes to
        // $XDG_CONFIG_HOME/chromium/Crash Reports (Debian's build starts crashpad whatever the
        // flags say), dconf to $XDG_CACHE_HOME, NSS to $HOME/.pki, and chromedriver leaves an
        // org.chromium.Chromium.scoped_dir.* folder in $TMPDIR per session. chromedriver passes
        // its environment on, so pointing these into the folder keeps root's home and /tmp clean.
        let environment = [
            "HOME": folder + "/home", "XDG_CONFIG_HOME": folder + "/config", "XDG_CACHE_HOME": folder + "/cache",
            "TMPDIR": folder + "/tmp",
        ]
        do {
            let (driver, port) = try await startDriver(driverPath, environment: environment, readyTimeout: readyTimeout)
            do {
                let capabilities: [String: Any] = [
                    "capabilities": [
                        "alwaysMatch": [
                            "browserName": "chrome",
                            "pageLoadStrategy": "normal",
                            // Implicit 0: `find` answers at once; waiting is explicit (`waitFor`).
                            "timeouts": ["implicit": 0, "pageLoad": 60_000, "script": 30_000],
                            "goog:chromeOptions": [
                                "binary": browserPath,
                                "args": chromiumArguments(width: width, height: height, profile: folder + "/profile"),
                            ] as [String: Any],
                        ] as [String: Any],
                    ],
                ]
                let answer = try await call(port: port, driver: driver, "POST", "/session", capabilities)
                guard let value = answer as? [String: Any], let sessionID = value["sessionId"] as? String else {
                    throw WebDriverError(command: "POST /session", code: nil, message: "no session id in \(String(describing: answer).prefix(500))")
                }
                let version = (value["capabilities"] as? [String: Any])?["browserVersion"] as? String ?? "?"
                let browser = HeadlessBrowser(port: port, sessionID: sessionID, browserVersion: version, folder: folder, driver: driver)
                do {
                    // `--window-size` sizes the window, frame included: make the viewport the size asked for.
                    try await browser.setWindowSize(width: width, height: height)
                } catch {
                    await browser.quit()
                    throw error
                }
                return browser
            } catch {
                driver.kill()
                throw error
            }
        } catch {
            cleanUp(folder)
            throw error
        }
    }

    /// Starts a browser, runs `body` with it and quits it, also when `body` throws or the task
    /// is cancelled.
    public static func with<T>(
        width: Int = 1280, height: Int = 800, _ body: (HeadlessBrowser) async throws -> T
    ) async throws -> T {
        let browser = try await start(width: width, height: height)
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            await browser.quit()
            throw error
        }
    }

    /// Ends the session (chromium closes and exits), then kills chromedriver and anything of
    /// chromium's still running, and removes ``folder``. Never throws; a second call does nothing.
    public func quit() async {
        let first = lock.withLock {
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        // A clean end first: chromium exits by itself and its processes go with it. This fails
        // at once in a cancelled task (requests honour cancellation); the kills below do it then.
        _ = try? await Self.call(port: port, driver: driver, "DELETE", "/session/\(sessionID)", timeout: 10)
        driver.kill()
        Self.cleanUp(folder)
    }

    /// What chromedriver and chromium printed so far: chromium's log, with the page's console
    /// messages and uncaught script errors as "INFO:CONSOLE" lines (among much D-Bus noise: a
    /// container has no system bus). For a failing test's message.
    public var log: String { driver.standardOutput + driver.standardError }

    /// The processes running from ``folder`` now (chromium's, crashpad's): none after ``quit()``.
    public var runningProcesses: [pid_t] {
        Self.processes(mentioning: URL(fileURLWithPath: folder).lastPathComponent)
    }

    /// Synchronous last resort for a browser nobody quit.
    deinit {
        let wasEnded = lock.withLock { ended }
        if !wasEnded {
            driver.kill()
            Self.cleanUp(folder)
        }
    }

    /// The flags chromium needs to start reliably in a container with no display, as root.
    static func chromiumArguments(width: Int, height: Int, profile: String) -> [String] {
        [
            "--headless=new",
            // Root cannot run chromium's sandbox: it refuses to start without this.
            "--no-sandbox",
            // No GPU here; software compositing (SwiftShader) draws everything, screenshots too.
            "--disable-gpu",
            // /dev/shm is 64 MB in a default Docker container: chromium crashes tabs when it fills.
            "--disable-dev-shm-usage",
            "--user-data-dir=\(profile)",
            "--window-size=\(width),\(height)",
            // Screenshots are in CSS pixels: one image pixel per CSS pixel, scrollbars take no width.
            "--force-device-scale-factor=1",
            "--hide-scrollbars",
            // A page's timers and rendering run at full speed although no one looks at it: the
            // tests measure how fast a live update shows (chromedriver adds the other two of these).
            "--disable-renderer-backgrounding",
            "--disable-background-timer-throttling",
            "--disable-backgrounding-occluded-windows",
            // Nothing fetched from the internet behind the test's back.
            "--disable-component-update",
            "--disable-extensions",
            "--no-first-run",
            "--no-default-browser-check",
            "--mute-audio",
            "--lang=en-US",
        ]
    }

    /// Starts chromedriver on a free port and waits for `GET /status` to say ready. Picks another
    /// port when the one it tried was taken in between (as ``PrivateNginx``).
    private static func startDriver(
        _ path: String, environment: [String: String], readyTimeout: Duration
    ) async throws -> (SpawnedProcess, Int) {
        var output = ""
        for _ in 0..<5 {
            let port = freeLoopbackPort()
            // --enable-chrome-logs: chromium's own log joins chromedriver's output (``log``): page
            // console messages and script errors ("INFO:CONSOLE"), and a crashing browser's last words.
            let driver = try SpawnedProcess(path, ["--port=\(port)", "--enable-chrome-logs"], environment: environment)
            let deadline = ContinuousClock.now + readyTimeout
            var lastProblem = "no answer"
            while ContinuousClock.now < deadline, driver.isRunning {
                do {
                    let answer = try await LoopbackHTTP.exchange(port: port, method: "GET", path: "/status", body: nil, timeout: 5)
                    let status = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
                    let value = status?["value"] as? [String: Any]
                    if value?["ready"] as? Bool == true { return (driver, port) }
                    lastProblem = "not ready: HTTP \(answer.status), \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
                } catch {
                    // Refused until it listens.
                    lastProblem = "\(error)"
                    if Task.isCancelled {
                        driver.kill()
                        throw CancellationError()
                    }
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            let running = driver.isRunning
            driver.kill()
            output = driver.standardOutput + driver.standardError
            guard !running, output.contains("in use") || output.contains("port not available") else {
                throw WebDriverError(
                    command: "GET /status", code: nil,
                    message: running
                        ? "chromedriver (\(path)) was not ready on port \(port) within \(readyTimeout) (\(lastProblem)); its output: \(output.suffix(2000))"
                        : "chromedriver (\(path)) exited with status \(driver.status ?? -1) before it was ready; its output: \(output.suffix(2000))")
            }
        }
        throw WebDriverError(command: "GET /status", code: nil, message: "chromedriver found no free port in 5 tries; its output: \(output.suffix(2000))")
    }

    /// Kills whatever still runs from `folder` and removes it. crashpad's handlers start in a
    /// session of their own (so killing chromedriver's process group misses them); they and
    /// any other straggler are found by the folder in their command line, unique to this browser.
    private static func cleanUp(_ folder: String) {
        // The folder's own name is unique and survives however a program spells the path.
        let name = URL(fileURLWithPath: folder).lastPathComponent
        let deadline = Date().addingTimeInterval(5)
        while true {
            let left = processes(mentioning: name)
            if left.isEmpty || Date() >= deadline { break }
            for pid in left { Glibc.kill(pid, SIGKILL) }
            usleep(20_000)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Running processes whose command line contains `text` (a zombie's is empty: it does not count).
    public static func processes(mentioning text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let needle = Array(text.utf8)
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                  data.count >= needle.count else { return nil }
            let bytes = [UInt8](data)
            for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
                if Array(bytes[start..<start + needle.count]) == needle { return pid }
            }
            return nil
        }
    }

    // MARK: - The protocol

    /// Sends one command of this session (`path` after `/session/<id>`) and returns its `value`.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        try await Self.call(port: port, driver: driver, method, "/session/\(sessionID)\(path)", body)
    }

    /// One WebDriver request: the answer's `value` (nil for JSON null), or a ``WebDriverError``
    /// with chromedriver's error code and message (without its stack trace of addresses). When
    /// no answer comes, the error says whether chromedriver still runs and what it printed last.
    ///
    /// 120 s per request by default: the whole test suite shares two cores, and a command may
    /// wait long for CPU without anything being wrong (a session start takes seconds then).
    private static func call(
        port: Int, driver: SpawnedProcess, _ method: String, _ path: String,
        _ body: [String: Any]? = nil, timeout: Double = 120
    ) async throws -> Any? {
        let name = "\(method) \(path)"
        var payload: Data?
        if method == "POST" {
            // W3C: every POST carries a JSON object, `{}` when the command takes no parameters.
            let object = body ?? [:]
            guard JSONSerialization.isValidJSONObject(object) else {
                throw WebDriverError(command: name, code: nil, message: "cannot send \(object) as JSON")
            }
            payload = try JSONSerialization.data(withJSONObject: object)
        }
        let status: Int, data: Data
        do {
            (status, data) = try await LoopbackHTTP.exchange(port: port, method: method, path: path, body: payload, timeout: timeout)
        } catch {
            let state = driver.isRunning ? "chromedriver still runs" : "chromedriver exited with status \(driver.status ?? -1)"
            throw WebDriverError(
                command: name, code: nil,
                message: "no answer from chromedriver on port \(port): \(error) (\(state)); its output: \((driver.standardOutput + driver.standardError).suffix(2000))")
        }
        guard let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any],
              let value = json["value"] else {
            throw WebDriverError(command: name, code: nil, message: "HTTP \(status) without a WebDriver answer: \(String(decoding: data.prefix(500), as: UTF8.self))")
        }
        if let failure = value as? [String: Any], let code = failure["error"] as? String {
            throw WebDriverError(command: name, code: code, message: failure["message"] as? String ?? "")
        }
        guard status == 200 else {
            throw WebDriverError(command: name, code: nil, message: "HTTP \(status): \(String(decoding: data.prefix(500), as: UTF8.self))")
        }
        return value is NSNull ? nil : value
    }

    // MARK: - Navigation

    /// Loads `url` and returns once its load event fired (page load strategy "normal").
    public func open(_ url: String) async throws {
        try await command("POST", "/url", ["url": url])
    }

    public var currentURL: String {
        get async throws { try await command("GET", "/url") as? String ?? "" }
    }

    public var title: String {
        get async throws { try await command("GET", "/title") as? String ?? "" }
    }

    /// The document as chromium serialises it now (scripts' changes included), not as served.
    public var pageSource: String {
        get async throws { try await command("GET", "/source") as? String ?? "" }
    }

    public func refresh() async throws {
        try await command("POST", "/refresh")
    }

    // MARK: - Elements

    /// The first element matching the CSS selector `css`, at once (no waiting); throws
    /// "no element matches <css> on <url>" when there is none.
    public func find(_ css: String) async throws -> Element {
        try await find(css, from: "")
    }

    /// Every element matching `css`, in document order; empty when none does.
    public func findAll(_ css: String) async throws -> [Element] {
        try await findAll(css, from: "")
    }

    /// `scope` is "" for the document, or "/element/<id>" to search inside an element.
    func find(_ css: String, from scope: String) async throws -> Element {
        do {
            let value = try await command("POST", "\(scope)/element", ["using": "css selector", "value": css])
            guard let element = Element(json: value, browser: self, selector: css) else {
                throw WebDriverError(command: "POST /element", code: nil, message: "no element reference in \(String(describing: value))")
            }
            return element
        } catch let error as WebDriverError where error.code == "no such element" {
            let place = scope.isEmpty ? "" : " inside the element found by its selector"
            let url = (try? await currentURL) ?? "?"
            throw WebDriverError(
                command: error.command, code: error.code,
                message: "no element matches \(css)\(place) on \(url.count > 200 ? url.prefix(200) + "…" : url)")
        }
    }

    func findAll(_ css: String, from scope: String) async throws -> [Element] {
        let value = try await command("POST", "\(scope)/elements", ["using": "css selector", "value": css])
        return (value as? [Any] ?? []).compactMap { Element(json: $0, browser: self, selector: css) }
    }

    // MARK: - Scripts

    /// Runs `script` as the body of a function in the page (it `return`s its result) with
    /// `args` as `arguments`. Arguments and results are JSON values; an ``Element`` passes as
    /// the DOM element, and a DOM element returned comes back as an ``Element``. JSON numbers
    /// come back as NSNumber (`as? Int`, `as? Double`), `null` as nil (NSNull inside arrays and
    /// objects). A script that throws fails with code "javascript error" and its message.
    @discardableResult
    public func execute(_ script: String, _ args: [Any] = []) async throws -> Any? {
        let value = try await command("POST", "/execute/sync", ["script": script, "args": try Self.toJSON(args)])
        return Self.fromJSON(value, browser: self)
    }

    /// As ``execute(_:_:)`` for a script that finishes later: it gets a callback as its last
    /// argument (`arguments[arguments.length - 1]`) and calls it with the result, within the
    /// session's script timeout (30 s).
    @discardableResult
    public func executeAsync(_ script: String, _ args: [Any] = []) async throws -> Any? {
        let value = try await command("POST", "/execute/async", ["script": script, "args": try Self.toJSON(args)])
        return Self.fromJSON(value, browser: self)
    }

    /// `value` made sendable as JSON: elements as references, nil as null; throws for anything
    /// JSON has no form for (rather than JSONSerialization's crash).
    static func toJSON(_ value: Any) throws -> Any {
        switch value {
        case let element as Element: return [elementKey: element.id]
        case let array as [Any]: return try array.map(toJSON)
        case let object as [String: Any]: return try object.mapValues(toJSON)
        case is String, is Bool, is Int, is Double, is NSNumber, is NSNull: return value
        case let number as any BinaryInteger: return Int(number)
        case let number as any BinaryFloatingPoint: return Double(number)
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return NSNull() }
                return try toJSON(wrapped)
            }
            throw WebDriverError(command: "script arguments", code: nil, message: "cannot pass a \(type(of: value)) to a script: JSON values and Elements only")
        }
    }

    static func fromJSON(_ value: Any?, browser: HeadlessBrowser) -> Any? {
        switch value {
        case nil, is NSNull: return nil
        case let object as [String: Any]:
            if let element = Element(json: object, browser: browser, selector: "(returned by a script)") { return element }
            return object.mapValues { fromJSON($0, browser: browser) ?? NSNull() }
        case let array as [Any]: return array.map { fromJSON($0, browser: browser) ?? NSNull() }
        default: return value
        }
    }

    // MARK: - Window and screenshots

    /// A PNG of the viewport (the size given to ``start(width:height:chromium:chromedriver:readyTimeout:)``
    /// or ``setWindowSize(width:height:)``), one pixel per CSS pixel.
    public func screenshot() async throws -> Data {
        let value = try await command("GET", "/screenshot")
        guard let base64 = value as? String, let png = Data(base64Encoded: base64) else {
            throw WebDriverError(command: "GET /screenshot", code: nil, message: "the screenshot is not base64: \(String(describing: value).prefix(100))")
        }
        return png
    }

    /// Makes the *viewport* (what the page lays out in, `innerWidth` × `innerHeight`, and the
    /// screenshot's size) `width` × `height`. chromium's new headless mode keeps a window frame
    /// as tall as a desktop browser's toolbars (143 px in chromium 156): a window of 800 × 600, by
    /// `--window-size` or WebDriver's window rect, shows the page in 800 × 457. So this sets the
    /// window, measures the frame and sets the window again that much larger; it throws when
    /// chromium still does not give the viewport asked for.
    public func setWindowSize(width: Int, height: Int) async throws {
        try await command("POST", "/window/rect", ["width": width, "height": height])
        var viewport = try await viewportSize()
        if viewport != (width, height) {
            let frame = (width: width - viewport.width, height: height - viewport.height)
            try await command("POST", "/window/rect", ["width": width + frame.width, "height": height + frame.height])
            viewport = try await viewportSize()
        }
        guard viewport == (width, height) else {
            throw WebDriverError(
                command: "POST /window/rect", code: nil,
                message: "asked for a viewport of \(width) × \(height), chromium gives \(viewport.width) × \(viewport.height)")
        }
    }

    /// The viewport's size in CSS pixels (`innerWidth` × `innerHeight`).
    public func viewportSize() async throws -> (width: Int, height: Int) {
        let size = try await execute("return [window.innerWidth, window.innerHeight]") as? [Any] ?? []
        return ((size.first as? NSNumber)?.intValue ?? 0, (size.last as? NSNumber)?.intValue ?? 0)
    }

    // MARK: - Cookies

    /// The cookies visible to the current page, as WebDriver describes them ("name", "value",
    /// "domain", "path", "httpOnly", "secure", "expiry", "sameSite").
    public func cookies() async throws -> [[String: Any]] {
        try await command("GET", "/cookie") as? [[String: Any]] ?? []
    }

    /// Deletes every cookie visible to the current page.
    public func deleteCookies() async throws {
        try await command("DELETE", "/cookie")
    }

    // MARK: - Waiting

    /// Polls `condition` every `interval` until it holds and returns how long that took from the
    /// call: at most about `interval` plus the condition's own round trips to chromium (a few
    /// milliseconds each) late, which a test measuring how fast a live update shows should allow
    /// for. A condition
    /// that throws "no such element" or "stale element reference" has not held yet; any other
    /// error ends the wait. Throws ``WebDriverError`` (code "timeout") after `timeout`.
    @discardableResult
    public func waitFor(
        timeout: Duration = .seconds(10), interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
    ) async throws -> Duration {
        let clock = ContinuousClock()
        let started = clock.now
        var lastError: WebDriverError?
        while true {
            do {
                if try await condition() { return clock.now - started }
                lastError = nil
            } catch let error as WebDriverError where error.code == "no such element" || error.code == "stale element reference" {
                lastError = error
            }
            if clock.now - started >= timeout {
                throw WebDriverError(
                    command: "waitFor", code: "timeout",
                    message: "the condition did not hold within \(timeout) on \((try? await currentURL) ?? "?")"
                        + (lastError.map { " (last: \($0))" } ?? ""))
            }
            try await Task.sleep(for: interval)
        }
    }
}

extension HeadlessBrowser {
    /// An element of the page, as a WebDriver reference: valid until the page is left or the
    /// element removed (then commands fail with "stale element reference"). Nested, as
    /// `HeadlessBrowser.Element`, so that the test targets importing BusTestSupport keep the
    /// name `Element` free.
    public struct Element: Sendable, CustomStringConvertible {
        /// chromedriver's reference.
        public let id: String
        /// The CSS selector it was found by, for messages.
        public let selector: String
        public let browser: HeadlessBrowser

        init?(json: Any?, browser: HeadlessBrowser, selector: String) {
            guard let object = json as? [String: Any], let id = object[HeadlessBrowser.elementKey] as? String else { return nil }
            self.id = id
            self.selector = selector
            self.browser = browser
        }

        public var description: String { "element \(selector)" }

        @discardableResult
        private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
            do {
                return try await browser.command(method, "/element/\(id)\(path)", body)
            } catch var error as WebDriverError {
                error.message = "\(selector): \(error.message)"
                throw error
            }
        }

        /// Its rendered text (as the user sees it: hidden parts left out, whitespace collapsed).
        public var text: String {
            get async throws { try await command("GET", "/text") as? String ?? "" }
        }

        /// The HTML attribute `name` as written in the page (nil when absent). What the user typed
        /// into an input is its `value` *property*: ``property(_:)``.
        public func attribute(_ name: String) async throws -> String? {
            try await command("GET", "/attribute/\(Self.escape(name))") as? String
        }

        /// The DOM property `name` (e.g. an input's current "value", a checkbox's "checked").
        public func property(_ name: String) async throws -> Any? {
            HeadlessBrowser.fromJSON(try await command("GET", "/property/\(Self.escape(name))"), browser: browser)
        }

        /// Scrolls it into view and clicks its centre, as a user would (fails with "element click
        /// intercepted" when something covers it).
        public func click() async throws {
            try await command("POST", "/click")
        }

        /// Focuses it and types `text` key by key after what it already holds.
        public func type(_ text: String) async throws {
            try await command("POST", "/value", ["text": text])
        }

        /// Empties an input or text area.
        public func clear() async throws {
            try await command("POST", "/clear")
        }

        /// The first element inside this one matching `css`.
        public func find(_ css: String) async throws -> Element {
            try await browser.find(css, from: "/element/\(id)")
        }

        public func findAll(_ css: String) async throws -> [Element] {
            try await browser.findAll(css, from: "/element/\(id)")
        }

        private static func escape(_ name: String) -> String {
            name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? name
        }
    }
}

/// A WebDriver command failed: which, the W3C error code when chromedriver gave one ("no such
/// element", "javascript error", "session not created", …; "timeout" from
/// ``HeadlessBrowser/waitFor(timeout:interval:_:)``) and its message.
public struct WebDriverError: Error, CustomStringConvertible {
    /// e.g. "POST /session/<id>/element".
    public var command: String
    public var code: String?
    public var message: String

    public init(command: String, code: String?, message: String) {
        self.command = command
        self.code = code
        self.message = message
    }

    public var description: String {
        "WebDriver \(command) failed" + (code.map { " (\($0))" } ?? "") + ": " + message
    }
}

/// A minimal HTTP/1.1 client for chromedriver on 127.0.0.1: one request per connection
/// (`Connection: close`), the answer read up to its `Content-Length` (or the end of the
/// connection). It parses what chromedriver sends, headers without a space after the colon
/// included, which URLSession on Linux does not (see ``HeadlessBrowser``).
enum LoopbackHTTP {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends one request and returns the status and body. The blocking socket work runs on a
    /// Dispatch thread, not on the cooperative pool; cancelling the task shuts the socket down,
    /// which ends a read or write in progress at once.
    static func exchange(port: Int, method: String, path: String, body: Data?, timeout: Double) async throws -> (status: Int, body: Data) {
        let connection = Connection()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result {
                        try connection.exchange(port: port, method: method, path: path, body: body, timeout: timeout)
                    })
                }
            }
        } onCancel: {
            connection.cancel()
        }
    }

    /// One socket, closed exactly once; ``cancel()`` shuts it down only while it is open (a
    /// closed descriptor's number may already belong to someone else).
    final class Connection: @unchecked Sendable {
        private let lock = NSLock()
        private var fd: Int32 = -1
        private var cancelled = false

        func cancel() {
            lock.withLock {
                cancelled = true
                if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
            }
        }

        func exchange(port: Int, method: String, path: String, body: Data?, timeout: Double) throws -> (status: Int, body: Data) {
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socketFD >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
            let wasCancelled = lock.withLock {
                fd = socketFD
                return cancelled
            }
            defer {
                lock.withLock {
                    close(socketFD)
                    fd = -1
                }
            }
            guard !wasCancelled else { throw CancellationError() }
            let deadline = Date().addingTimeInterval(timeout)

            /// Sets the socket's send and receive timeouts to what is left before the deadline
            /// (connect, send and recv all honour them); throws when nothing is left.
            func armTimeout() throws {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw Failure(description: "no answer within \(timeout) s") }
                var value = timeval(tv_sec: Int(left), tv_usec: Int((left - left.rounded(.down)) * 1_000_000))
                for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
                    setsockopt(socketFD, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
                }
            }
            func failure(_ what: String) -> Error {
                let code = errno
                if lock.withLock({ cancelled }) { return CancellationError() }
                if code == EAGAIN || code == EWOULDBLOCK || code == EINPROGRESS { return Failure(description: "no answer within \(timeout) s (\(what))") }
                return Failure(description: "\(what): \(String(cString: strerror(code)))")
            }

            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            try armTimeout()
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw failure("connect to 127.0.0.1:\(port)") }

            var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nAccept: application/json\r\n"
            if let body { request += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n" }
            var outgoing = Data((request + "\r\n").utf8) + (body ?? Data())
            while !outgoing.isEmpty {
                try armTimeout()
                let sent = outgoing.withUnsafeBytes { send(socketFD, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { throw failure("send") }
                outgoing.removeFirst(sent)
            }

            var incoming = Data()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            var head: (status: Int, bodyStart: Int, length: Int?)?
            while true {
                if let head, let length = head.length, incoming.count - head.bodyStart >= length { break }
                try armTimeout()
                let received = recv(socketFD, &chunk, chunk.count, 0)
                if received < 0 && errno == EINTR { continue }
                guard received >= 0 else { throw failure("recv") }
                if received == 0 { break }
                incoming.append(contentsOf: chunk[..<received])
                if head == nil { head = try parseHead(incoming) }
            }
            guard let head else {
                throw Failure(description: "the connection closed after \(incoming.count) bytes, before a complete answer: \(String(decoding: incoming.prefix(200), as: UTF8.self))")
            }
            let end = head.length.map { min(incoming.count, head.bodyStart + $0) } ?? incoming.count
            if let length = head.length, end - head.bodyStart < length {
                throw Failure(description: "the connection closed \(end - head.bodyStart) bytes into a body of \(length)")
            }
            return (head.status, incoming.subdata(in: head.bodyStart..<end))
        }

        /// The status, where the body starts and its length, once the head is complete; nil before.
        private func parseHead(_ data: Data) throws -> (status: Int, bodyStart: Int, length: Int?)? {
            guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
            let lines = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = lines[0].split(separator: " ")
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
                throw Failure(description: "not an HTTP answer: \(lines[0].prefix(200))")
            }
            var length: Int?
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if name == "content-length" { length = Int(value) }
                if name == "transfer-encoding", value.lowercased() != "identity" {
                    throw Failure(description: "unexpected Transfer-Encoding \(value) (chromedriver sends Content-Length)")
                }
            }
            return (status, end.upperBound - data.startIndex, length)
        }
    }
}
