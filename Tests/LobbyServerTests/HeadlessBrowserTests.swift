import BusTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// The WebDriver client the lobby's browser tests drive chromium with (BusTestSupport's
/// HeadlessBrowser), proved against a `data:` page and a throwaway Hummingbird server; and that
/// it leaves no process or folder behind. Serialized: each test runs a chromium of its own, and
/// two at once on the suite's two cores only make both slower.
@Suite(.serialized) struct HeadlessBrowserTests {
    /// A page that needs no server: a list, an input and a script-filled paragraph.
    static let page = """
        <!doctype html><html><head><title>Data page</title></head><body>
        <ul id="fruit"><li class="fruit">apple</li><li class="fruit">pear</li><li class="fruit" data-ripe="yes">plum</li></ul>
        <input id="box" value="start">
        <p id="filled"></p>
        <script>document.getElementById('filled').textContent = 'filled by script';</script>
        </body></html>
        """

    static var dataURL: String {
        "data:text/html;charset=utf-8," + page.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    @Test func drivesADataPage() async throws {
        try await HeadlessBrowser.with(width: 800, height: 600) { browser in
            try await browser.open(Self.dataURL)
            #expect(try await browser.title == "Data page")
            #expect(try await browser.currentURL.hasPrefix("data:text/html"))
            #expect(try await browser.pageSource.contains("filled by script"), "the source is the live DOM, not what was served")

            // Finding: by CSS, one and all, inside an element; text and attributes.
            let fruit = try await browser.findAll("li.fruit")
            var names: [String] = []
            for item in fruit { names.append(try await item.text) }
            #expect(names == ["apple", "pear", "plum"])
            #expect(try await fruit[2].attribute("data-ripe") == "yes")
            #expect(try await fruit[0].attribute("data-ripe") == nil)
            #expect(try await browser.find("#fruit").findAll("li").count == 3)
            #expect(try await browser.findAll(".nothing").isEmpty)

            // A missing element says which selector and where.
            let missing = await #expect(throws: WebDriverError.self) { try await browser.find("#missing") }
            #expect(missing?.code == "no such element")
            #expect(missing?.description.contains("no element matches #missing on data:text/html") == true, "\(String(describing: missing))")

            // Typing appends; clear empties; what was typed is the value property, not the attribute.
            let box = try await browser.find("#box")
            try await box.type(" more")
            #expect(try await box.property("value") as? String == "start more")
            #expect(try await box.attribute("value") == "start")
            try await box.clear()
            try await box.type("typed")
            #expect(try await box.property("value") as? String == "typed")

            // Scripts: arguments in, values and elements out, errors with the script's message.
            #expect(try await browser.execute("return arguments[0] + arguments[1]", [40, 2]) as? Int == 42)
            #expect(try await browser.execute("return arguments[0].toUpperCase()", ["abc"]) as? String == "ABC")
            #expect(try await browser.execute("return null") == nil)
            let list = try await browser.execute("return [1, 'two', null, {a: true}]") as? [Any]
            #expect(list?.count == 4)
            #expect(list?[2] is NSNull)
            #expect((list?[3] as? [String: Any])?["a"] as? Bool == true)
            let returned = try await browser.execute("return document.querySelectorAll('li')[1]") as? HeadlessBrowser.Element
            #expect(try await returned?.text == "pear")
            #expect(try await browser.execute("return arguments[0].id", [box]) as? String == "box")
            let failed = await #expect(throws: WebDriverError.self) { try await browser.execute("throw new Error('on purpose')") }
            #expect(failed?.code == "javascript error")
            #expect(failed?.message.contains("on purpose") == true)
            // The page's console reaches the browser's log (chromium's log, through chromedriver).
            try await browser.execute("console.log('console line ' + 6 * 7)")
            try await browser.waitFor(timeout: .seconds(10)) { browser.log.contains("console line 42") }
            let later = try await browser.executeAsync("const done = arguments[arguments.length - 1]; setTimeout(() => done(arguments[0] * 2), 50)", [21])
            #expect(later as? Int == 42)

            // Screenshots are PNGs of the viewport; resizing the window resizes them.
            try await Self.expectScreenshot(of: browser, width: 800, height: 600)
            try await browser.setWindowSize(width: 375, height: 667)  // a phone
            try await Self.expectScreenshot(of: browser, width: 375, height: 667)
        }
    }

    /// A PNG (signature, IHDR size) as large as the viewport, and the viewport of the size asked for.
    static func expectScreenshot(of browser: HeadlessBrowser, width: Int, height: Int) async throws {
        let png = try await browser.screenshot()
        let bytes = [UInt8](png)
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
        try #require(bytes.count > 24 && bytes[12..<16].elementsEqual("IHDR".utf8))
        let pngWidth = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let pngHeight = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
        let viewport = try await browser.execute("return [window.innerWidth, window.innerHeight]") as? [Int]
        #expect(viewport == [width, height], "the viewport, not the window, has the size asked for")
        #expect(pngWidth == width && pngHeight == height, "screenshot \(pngWidth)×\(pngHeight), viewport asked for \(width)×\(height)")
        #expect(png.count > 1000)
    }

    @Test func submitsAFormAndSeesCookiesAndALiveUpdate() async throws {
        try await Self.withPageServer { port in
            try await HeadlessBrowser.with { browser in
                try await browser.open("http://127.0.0.1:\(port)/")
                #expect(try await browser.title == "Form")

                // The server's cookie is the page's; deleted, it is gone.
                let cookies = try await browser.cookies()
                #expect(cookies.contains { $0["name"] as? String == "visit" && $0["value"] as? String == "1" }, "\(cookies)")

                let name = try await browser.find("input[name=name]")
                try await name.clear()
                try await name.type("Ada & Bob")
                try await browser.find("button[type=submit]").click()
                // The click returns before the next page has loaded: wait for it.
                try await browser.waitFor(timeout: .seconds(30)) { try await browser.title == "Hello" }
                #expect(try await browser.currentURL.hasSuffix("/hello?name=Ada+%26+Bob"))
                let greeting = try await browser.find("#greeting").text
                #expect(greeting == "Hello, Ada & Bob")

                try await browser.deleteCookies()
                #expect(try await browser.cookies().isEmpty)

                // How long a change made by the page itself takes to be seen: a 200 ms timer.
                try await browser.execute("setTimeout(() => { document.getElementById('greeting').textContent = 'updated' }, 200)")
                let took = try await browser.waitFor { try await browser.find("#greeting").text == "updated" }
                #expect(took >= .milliseconds(150) && took < .seconds(10), "\(took)")
                // And an element that appears only later: "no such element" counts as not yet.
                try await browser.execute("setTimeout(() => { document.body.insertAdjacentHTML('beforeend', '<p id=late>late</p>') }, 100)")
                try await browser.waitFor { try await browser.find("#late").text == "late" }
                print("HeadlessBrowserTests: a 200 ms timer's update seen after \(took)")
            }
        }
    }

    @Test func quitLeavesNothingRunningAndTimesStartAndQuit() async throws {
        let clock = ContinuousClock()
        let before = clock.now
        let browser = try await HeadlessBrowser.start(width: 400, height: 300)
        let started = clock.now - before
        #expect(!browser.runningProcesses.isEmpty, "chromium runs from the browser's folder")
        #expect(acceptsConnections(port: browser.port))
        try await browser.open("data:text/html,<title>x</title>")
        let quitStart = clock.now
        await browser.quit()
        let quitTook = clock.now - quitStart
        #expect(browser.runningProcesses.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: browser.folder))
        #expect(!acceptsConnections(port: browser.port))
        await browser.quit()  // a second quit does nothing
        print("HeadlessBrowserTests: start (chromedriver + session) \(started), quit \(quitTook), chromium \(browser.browserVersion)")

        // `with` quits also when its body throws.
        struct Planned: Error {}
        var folder = ""
        await #expect(throws: Planned.self) {
            try await HeadlessBrowser.with { browser in
                folder = browser.folder
                throw Planned()
            }
        }
        #expect(!folder.isEmpty && !FileManager.default.fileExists(atPath: folder))
        #expect(HeadlessBrowser.processes(mentioning: URL(fileURLWithPath: folder).lastPathComponent).isEmpty)
    }

    @Test func saysHowToInstallAMissingDriver() async throws {
        let error = await #expect(throws: TestEnvironmentError.self) {
            try await HeadlessBrowser.start(chromedriver: "/nonexistent/chromedriver")
        }
        #expect(error?.description.contains("apt-get install chromium chromium-driver") == true, "\(String(describing: error))")
    }

    // MARK: - The page server

    /// A Hummingbird server on a free port for `body`: `/` a form (and a cookie), `/hello` the
    /// greeting it submits to.
    static func withPageServer(_ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.get("/") { _, _ in
            html("""
                <!doctype html><html><head><title>Form</title></head><body>
                <form action="/hello" method="get"><input name="name" value="preset"><button type="submit">Go</button></form>
                </body></html>
                """, headers: [.setCookie: "visit=1; Path=/"])
        }
        router.get("/hello") { request, _ in
            // A form's query as browsers write it (application/x-www-form-urlencoded): "+" is a space.
            let pairs = (request.uri.query ?? "").split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
            let raw = pairs.first { $0.first == "name" }?.last ?? ""
            let name = raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
            let escaped = name.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            return html("<!doctype html><html><head><title>Hello</title></head><body><h1 id=\"greeting\">Hello, \(escaped)</h1></body></html>")
        }
        var logger = Logger(label: "headless-browser-pages")
        logger.logLevel = .warning
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        try await application.test(.live) { client in
            try await body(try #require(client.port))
        }
    }

    static func html(_ text: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
