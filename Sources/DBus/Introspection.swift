/// The `Introspect` XML for an exported object (org.freedesktop.DBus.Introspectable).
enum Introspection {
    static func xml(for object: DBusExportedObject?, children: [String]) -> String {
        var lines = [
            #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN""#,
            #" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#,
            "<node>",
        ]
        lines += standardInterfaces(isObjectManager: object?.isObjectManager ?? false)
        for interface in object?.interfaces ?? [] {
            lines.append("  <interface name=\"\(escape(interface.name))\">")
            for method in interface.methods {
                lines.append("    <method name=\"\(escape(method.name))\">")
                for type in completeTypes(method.inputSignature) {
                    lines.append("      <arg type=\"\(escape(type))\" direction=\"in\"/>")
                }
                for type in completeTypes(method.outputSignature) {
                    lines.append("      <arg type=\"\(escape(type))\" direction=\"out\"/>")
                }
                lines.append("    </method>")
            }
            for (name, value) in interface.properties.sorted(by: { $0.key < $1.key }) {
                lines.append("    <property name=\"\(escape(name))\" type=\"\(escape(value.signatureText))\" access=\"read\"/>")
            }
            lines.append("  </interface>")
        }
        for child in children {
            lines.append("  <node name=\"\(escape(child))\"/>")
        }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func standardInterfaces(isObjectManager: Bool) -> [String] {
        var lines = [
            "  <interface name=\"org.freedesktop.DBus.Introspectable\">",
            "    <method name=\"Introspect\"><arg type=\"s\" direction=\"out\"/></method>",
            "  </interface>",
            "  <interface name=\"org.freedesktop.DBus.Peer\">",
            "    <method name=\"Ping\"/>",
            "  </interface>",
            "  <interface name=\"org.freedesktop.DBus.Properties\">",
            "    <method name=\"Get\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"out\"/></method>",
            "    <method name=\"GetAll\"><arg type=\"s\" direction=\"in\"/><arg type=\"a{sv}\" direction=\"out\"/></method>",
            "    <method name=\"Set\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"in\"/></method>",
            "    <signal name=\"PropertiesChanged\"><arg type=\"s\"/><arg type=\"a{sv}\"/><arg type=\"as\"/></signal>",
            "  </interface>",
        ]
        if isObjectManager {
            lines += [
                "  <interface name=\"org.freedesktop.DBus.ObjectManager\">",
                "    <method name=\"GetManagedObjects\"><arg type=\"a{oa{sa{sv}}}\" direction=\"out\"/></method>",
                "    <signal name=\"InterfacesAdded\"><arg type=\"o\"/><arg type=\"a{sa{sv}}\"/></signal>",
                "    <signal name=\"InterfacesRemoved\"><arg type=\"o\"/><arg type=\"as\"/></signal>",
                "  </interface>",
            ]
        }
        return lines
    }

    /// Splits a signature into its single complete types (`sa{sv}as` → `s`, `a{sv}`, `as`).
    static func completeTypes(_ signature: String) -> [String] {
        var types: [String] = []
        var current = ""
        var depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            default: break
            }
            if depth == 0, character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
