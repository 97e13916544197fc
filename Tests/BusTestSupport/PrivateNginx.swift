import Foundation
import Glibc

/// nginx serving the repository's site file (nginx/nearplay-lobby.conf) on a free port of
/// 127.0.0.1 in front of the given upstream ports, from a temporary folder, in the foreground.
/// Only the `listen` lines and the upstreams' `server` lines are replaced: what the tests prove
/// of the proxy, they prove of the file operators install.
public final class PrivateNginx: @unchecked Sendable {
    public let port: Int
    public let directory: String
    private let process: SpawnedProcess

    public init(upstreams: [Int], site: URL = repositoryRoot.appendingPathComponent("nginx/nearplay-lobby.conf")) async throws {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestEnvironmentError("nginx is not installed: run scripts/bootstrap, or apt-get install nginx")
        }
        directory = "/tmp/nearplay-nginx-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/logs", withIntermediateDirectories: true)
        let siteText = try String(contentsOf: site, encoding: .utf8)
        var lastError = ""
        for _ in 0..<5 {
            let port = freeLoopbackPort()
            var lines: [String] = []
            var wroteServers = false
            for line in siteText.components(separatedBy: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("listen [::]") { continue }
                if trimmed.hasPrefix("upstream ") { wroteServers = false }
                if trimmed.hasPrefix("listen ") {
                    lines.append("    listen 127.0.0.1:\(port);")
                } else if trimmed.hasPrefix("server 127.0.0.1:") {
                    if !wroteServers {
                        lines += upstreams.map { "    server 127.0.0.1:\($0) max_fails=1 fail_timeout=2s;" }
                        wroteServers = true
                    }
                } else {
                    lines.append(line)
                }
            }
            let temp = directory + "/temp"
            let main = """
                daemon off;
                master_process on;
                worker_processes 1;
                pid \(directory)/nginx.pid;
                error_log \(directory)/logs/error.log warn;
                \(geteuid() == 0 ? "user nobody nogroup;" : "")
                events { worker_connections 1024; }
                http {
                    access_log \(directory)/logs/access.log;
                    client_body_temp_path \(temp)/body;
                    proxy_temp_path \(temp)/proxy;
                    fastcgi_temp_path \(temp)/fastcgi;
                    uwsgi_temp_path \(temp)/uwsgi;
                    scgi_temp_path \(temp)/scgi;
                    include \(directory)/site.conf;
                }
                """
            try lines.joined(separator: "\n").write(toFile: directory + "/site.conf", atomically: true, encoding: .utf8)
            try main.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
            if geteuid() == 0 { chown(temp, 65534, 65534) }
            let process = try SpawnedProcess(nginx, ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/logs/error.log"])
            // Ready once it accepts connections on its port.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, process.isRunning, !acceptsConnections(port: port) {
                try? await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning, acceptsConnections(port: port) {
                self.port = port
                self.process = process
                return
            }
            process.kill()
            lastError = (try? String(contentsOfFile: directory + "/logs/error.log", encoding: .utf8)) ?? process.standardError
            guard lastError.contains("Address already in use") else { break }
        }
        throw TestEnvironmentError("nginx did not start in \(directory): \(lastError.suffix(800))")
    }

    /// What nginx logged (errors and warnings: failed upstreams, for one).
    public var errorLog: String { (try? String(contentsOfFile: directory + "/logs/error.log", encoding: .utf8)) ?? "" }

    public func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

/// A TCP port of 127.0.0.1 free a moment ago.
public func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts a TCP connection on 127.0.0.1:`port` now.
public func acceptsConnections(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}
