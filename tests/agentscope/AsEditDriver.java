// as-edit's test of examples/agentscope/AsEditFilesystem.java: every filesystem method, on
// trees holding the names and files the toolset's scenarios hold, through a backend running
// `sh -c` locally, compared with Oracle (LocalFilesystem's semantics with the formats chosen in
// examples/agentscope/README.md). Plain Java, no JUnit: java AsEditDriver HELPER (sh: the first
// on PATH).
import io.agentscope.core.agent.RuntimeContext;
import io.agentscope.harness.agent.filesystem.AbstractFilesystem;
import io.agentscope.harness.agent.filesystem.model.EditResult;
import io.agentscope.harness.agent.filesystem.model.ExecuteResponse;
import io.agentscope.harness.agent.filesystem.model.FileData;
import io.agentscope.harness.agent.filesystem.model.FileDownloadResponse;
import io.agentscope.harness.agent.filesystem.model.FileInfo;
import io.agentscope.harness.agent.filesystem.model.FileUploadResponse;
import io.agentscope.harness.agent.filesystem.model.GlobResult;
import io.agentscope.harness.agent.filesystem.model.GrepMatch;
import io.agentscope.harness.agent.filesystem.model.GrepResult;
import io.agentscope.harness.agent.filesystem.model.LsResult;
import io.agentscope.harness.agent.filesystem.model.ReadResult;
import io.agentscope.harness.agent.filesystem.model.WriteResult;
import io.agentscope.harness.agent.filesystem.sandbox.AbstractSandboxFilesystem;
import io.agentscope.harness.agent.filesystem.sandbox.AsEditFilesystem;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

public final class AsEditDriver {
    static final RuntimeContext RC = RuntimeContext.empty();
    static int passed;
    static int failed;
    static String sh = "/bin/sh";
    static String pathEnv = System.getenv("PATH");

    public static void main(String[] args) throws Exception {
        String helper = args[0];
        // The backend's sh is the first on PATH: with PATH holding only busybox's links, busybox.
        for (String dir : pathEnv.split(":")) {
            if (Files.isExecutable(Path.of(dir, "sh"))) {
                sh = Path.of(dir, "sh").toString();
                break;
            }
        }
        // AS_EDIT_JAVA_TMP: where the trees go (the script gives a tmpfs: thousands of small
        // files take seconds on a loaded disk).
        String tmp = System.getenv("AS_EDIT_JAVA_TMP");
        Path work = tmp != null && !tmp.isEmpty()
                ? Files.createTempDirectory(Path.of(tmp), "as-edit-java")
                : Files.createTempDirectory("as-edit-java");
        long start = System.nanoTime();
        long t0 = start;
        try {
            Path a = work.resolve("a");
            Path b = work.resolve("b");
            buildTree(a, false);
            buildTree(b, true);
            ShellBackend backend = new ShellBackend(b, false);
            AsEditFilesystem fs = new AsEditFilesystem(backend, helper);
            t0 = System.nanoTime();
            readSide(fs, new Oracle(b), b); // the same tree: the same mtimes
            long t1 = System.nanoTime();
            writeSide(fs, backend, new Oracle(a), a, b);
            long t2 = System.nanoTime();
            System.out.printf("read side %d ms, write side %d ms%n", (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000);
            shlexBackend(fs, helper, b);
            fallback(b);
            exceptions(fs);
        } finally {
            run(work.getParent(), "chmod -R u+rwx '" + work + "'; rm -rf '" + work + "'");
        }
        System.out.printf("trees built in %d ms%n", (t0 - start) / 1_000_000);
        System.out.println(
                "java AsEditFilesystem (sh = " + Path.of(sh).toRealPath() + "): " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    // ==================== The trees ====================

    /** The toolset scenarios' awkward names and files; the same bytes on each call. */
    static void buildTree(Path root, boolean large) throws IOException {
        Files.createDirectories(root.resolve("d/sub/deep"));
        Files.createDirectories(root.resolve("d/.hidden"));
        Files.createDirectories(root.resolve("d/.git"));
        Files.createDirectories(root.resolve("bad"));
        Files.createDirectories(root.resolve("many"));
        w(root, "d/x.txt", "alpha\nbeta\ngamma\n");
        w(root, "d/.dot", "beta dotfile\n");
        w(root, "d/.hidden/h.txt", "beta hidden\n");
        w(root, "d/.git/config", "beta in git\n");
        w(root, "d/a:b.txt", "beta: colon\n");
        w(root, "d/tab\tname.txt", "beta\ttab\n");
        w(root, "d/new\nline.txt", "beta newline name\n");
        w(root, "d/with space.md", "beta space\n");
        w(root, "d/-dash.txt", "-beta dash\n");
        w(root, "d/crlf.txt", "one\r\nbeta two\r\nthree\r\n");
        w(root, "d/noeol.txt", "first\nbeta last");
        w(root, "d/empty.txt", "");
        w(root, "d/blank.txt", "  \n");
        w(root, "d/sub/s.txt", "beta sub\n");
        w(root, "d/sub/deep/z.rs", "fn beta() {}\n");
        w(root, "d/sub/m.md", "# beta\n");
        w(root, "d/text.png", "I am text with a png name\n");
        Files.write(root.resolve("d/bin.txt"), new byte[] {'b', 'e', 't', 'a', 0, 1, 2, (byte) 255});
        Files.write(root.resolve("d/latin1.txt"), new byte[] {'c', 'a', 'f', (byte) 0xe9, '\n'});
        w(root, "many/one.txt", "beta\n");
        if (large) {
            // Answers longer than one page (262,144 bytes) and than a backend's 512 KiB.
            StringBuilder huge = new StringBuilder();
            for (int i = 1; i <= 120_000; i++) {
                huge.append("line ").append(i).append(" of a large file\n");
            }
            w(root, "huge.txt", huge.toString());
            w(root, "longline.txt", "x".repeat(700_000) + "\nsecond\n");
            for (int i = 0; i < 1200; i++) {
                w(root, String.format("many/%s-%05d.txt", "long-name".repeat(22), i), "beta\n");
            }
        }
        Path d = root.resolve("d");
        Files.createSymbolicLink(d.resolve("dang"), Path.of("nowhere"));
        Files.createSymbolicLink(d.resolve("loop1"), Path.of("loop2"));
        Files.createSymbolicLink(d.resolve("loop2"), Path.of("loop1"));
        Files.createSymbolicLink(d.resolve("sub/up"), Path.of(".."));
        Files.createSymbolicLink(d.resolve("link.txt"), Path.of("x.txt"));
        Files.createSymbolicLink(d.resolve("dlink"), Path.of("../many"));
        // Targets far older than their links: ls must show the target's mtime (and size).
        Files.setLastModifiedTime(d.resolve("x.txt"), FileTime.fromMillis(1_000_000_000_123L));
        Files.setLastModifiedTime(root.resolve("many"), FileTime.fromMillis(1_100_000_000_456L));
        run(root, "mkfifo d/fifo && : > \"bad/$(printf 'bad\\377.txt')\"");
    }

    static List<String> paths(GlobResult r) {
        return r.isSuccess() ? r.matches().stream().map(FileInfo::path).toList() : List.of(r.error());
    }

    static void w(Path root, String rel, String s) throws IOException {
        Files.writeString(root.resolve(rel), s, StandardCharsets.UTF_8);
    }

    // ==================== Read side ====================

    static void readSide(AsEditFilesystem fs, Oracle o, Path b) {
        for (String p : List.of("d", "d/sub", "d/.hidden", "many", "d/x.txt", "nope", "d/sub/up")) {
            check("ls " + p, o.ls(p), fs.ls(RC, p));
        }
        LsResult bad = fs.ls(RC, "bad");
        // Java cannot name it back to stat it: its name, type and size.
        check("ls non-UTF-8 name", "bad/bad\uFFFD.txt false 0", bad.entries().size() == 1
                ? bad.entries().get(0).path() + " " + bad.entries().get(0).isDirectory() + " "
                        + bad.entries().get(0).size() : bad.toString());
        int[][] ranges = {{0, 2000}, {0, 0}, {1, 1}, {2, 5}, {3, 1}, {4, 1}, {-3, 2}, {100, 10}};
        for (String p : List.of("d/x.txt", "d/crlf.txt", "d/noeol.txt", "d/empty.txt",
                "d/blank.txt", "d/tab\tname.txt", "d/new\nline.txt", "d/-dash.txt",
                "d/bin.txt", "d/latin1.txt", "d/text.png", "d/link.txt", "d/dang", "d/loop1",
                "d/fifo", "d", "nope")) {
            for (int[] r : ranges) {
                check("read " + p + " " + r[0] + "," + r[1], o.read(p, r[0], r[1]),
                        fs.read(RC, p, r[0], r[1]));
            }
        }
        for (int[] r : new int[][] {{0, 0}, {0, 2000}, {119_990, 100}, {120_000, 1}, {5, 30_000}}) {
            check("read huge.txt " + r[0] + "," + r[1], o.read("huge.txt", r[0], r[1]),
                    fs.read(RC, "huge.txt", r[0], r[1]));
        }
        for (int[] r : new int[][] {{0, 0}, {0, 1}, {1, 1}, {2, 1}}) {
            check("read longline.txt " + r[0] + "," + r[1], o.read("longline.txt", r[0], r[1]),
                    fs.read(RC, "longline.txt", r[0], r[1]));
        }
        // LocalFilesystem's count (split("\n", -1)): after a final newline one more, empty,
        // line, so an offset equal to the lines is an empty read; the helper's text path and
        // the raw one (a line longer than a page) alike.
        ReadResult empty = ReadResult.success(new FileData("", "utf-8"));
        check("read at the line count", empty, fs.read(RC, "d/x.txt", 3, 1));
        check("read past the line count", ReadResult.fail("Line offset 4 exceeds file length (4 lines)"),
                fs.read(RC, "d/x.txt", 4, 1));
        check("read at the line count, no final newline",
                ReadResult.fail("Line offset 2 exceeds file length (2 lines)"), fs.read(RC, "d/noeol.txt", 2, 1));
        check("read at the line count, raw", empty, fs.read(RC, "longline.txt", 2, 1));
        check("read past the line count, raw", ReadResult.fail("Line offset 3 exceeds file length (3 lines)"),
                fs.read(RC, "longline.txt", 3, 1));
        String[][] greps = {{"beta", null, null}, {"beta", "d", null}, {"beta", "d", "*.txt"},
            {"beta", "d", "**/*.rs"}, {"beta", "d", "*.{md,rs}"}, {"beta", "d/x.txt", null},
            {"beta", "nope", null}, {":", "d", null}, {"\t", "d", null}, {"-beta", "d", null},
            {"entry", "many", null}, {"beta", "many", null}, {"two", "d/crlf.txt", null},
            {"no such text", "d", null}};
        for (String[] g : greps) {
            check("grep " + String.join(" ", Objects.toString(g[0]), Objects.toString(g[1]),
                    Objects.toString(g[2])), o.grep(g[0], g[1], g[2]), fs.grep(RC, g[0], g[1], g[2]));
        }
        // A pattern holding a newline: refused (README), where grep -F takes each line as a
        // pattern and LocalFilesystem's rg fails with nothing on stdout (an empty success).
        check("grep newline pattern", "Error searching for 'beta\nx': invalid_argument: …",
                fs.grep(RC, "beta\nx", "d", null).error());
        String[][] globs = {{"*.txt", "d"}, {"*", "d"}, {"**/*.rs", "d"}, {"sub/*.txt", "d"},
            {"*.{md,rs}", "d"}, {"/*.txt", "d"}, {"*.txt", "nope"}, {"*.txt", "many"},
            {"*.rs", null}, {"*.rs", "/"}, {"x.txt", "d"}, {"**", "d/sub"}, {"deep/*.rs", "d"},
            {"sub/**/*.txt", "d"}, {"sub/**/*.rs", "d"}, {"sub/deep/*.rs", "d"}, {"/sub/*.txt", "d"},
            {"/x.txt", "d"}};
        for (String[] g : globs) {
            check("glob " + g[0] + " " + g[1], o.glob(g[0], g[1]), fs.glob(RC, g[0], g[1]));
        }
        // rg's meaning, as grep's glob: a '/' anchors the pattern under the root (no floating),
        // and "**/" matches no directory too.
        check("glob sub/**/*.txt: zero directories", List.of("d/sub/s.txt"), paths(fs.glob(RC, "sub/**/*.txt", "d")));
        check("glob deep/*.rs: anchored, not floating", List.of(), paths(fs.glob(RC, "deep/*.rs", "d")));
        check("glob /x.txt: at the root only", List.of("d/x.txt"), paths(fs.glob(RC, "/x.txt", "d")));
        for (String p : List.of("d", "d/x.txt", "d/dang", "d/loop1", "d/link.txt", "d/fifo",
                "nope", "", "d/new\nline.txt")) {
            check("exists " + p, o.exists(p), fs.exists(RC, p));
        }
    }

    // ==================== Write side (on two equal trees) ====================

    static void writeSide(AsEditFilesystem fs, ShellBackend backend, Oracle o, Path a, Path b)
            throws IOException {
        step("write new", () -> o.write("d/new.txt", "hello\n"), () -> fs.write(RC, "d/new.txt", "hello\n"), a, b);
        step("write parents", () -> o.write("n1/n2/f.txt", "x"), () -> fs.write(RC, "n1/n2/f.txt", "x"), a, b);
        step("write exists", () -> o.write("d/x.txt", "no"), () -> fs.write(RC, "d/x.txt", "no"), a, b);
        step("write over dir", () -> o.write("d/sub", "no"), () -> fs.write(RC, "d/sub", "no"), a, b);
        step("write odd name", () -> o.write("d/new\nname:\t-x", "é\n"),
                () -> fs.write(RC, "d/new\nname:\t-x", "é\n"), a, b);
        String big = "big line ü\n".repeat(40_000);
        step("write big (upload + move)", () -> o.write("d/big.txt", big), () -> fs.write(RC, "d/big.txt", big), a, b);
        step("write big exists", () -> o.write("d/big.txt", big), () -> fs.write(RC, "d/big.txt", big), a, b);
        // Another writer creates the target between the upload and the move: the move refuses
        // (RENAME_NOREPLACE), the racer's file stays, the upload is removed.
        backend.afterUpload = () -> racer(b);
        step("write big raced", () -> {
            racer(a);
            return WriteResult.fail("Cannot write to d/raced.txt because it already exists. Read and"
                    + " then make an edit, or write to a new path.");
        }, () -> fs.write(RC, "d/raced.txt", big), a, b);
        backend.afterUpload = null;
        step("edit one", () -> o.edit("d/x.txt", "beta", "BETA", false), () -> fs.edit(RC, "d/x.txt", "beta", "BETA", false), a, b);
        step("edit missing", () -> o.edit("d/none", "a", "b", false), () -> fs.edit(RC, "d/none", "a", "b", false), a, b);
        step("edit dir", () -> o.edit("d/sub", "a", "b", false), () -> fs.edit(RC, "d/sub", "a", "b", false), a, b);
        step("edit not found", () -> o.edit("d/x.txt", "zeta", "b", false), () -> fs.edit(RC, "d/x.txt", "zeta", "b", false), a, b);
        step("edit multiple", () -> o.edit("d/x.txt", "a", "A", false), () -> fs.edit(RC, "d/x.txt", "a", "A", false), a, b);
        step("edit all", () -> o.edit("d/x.txt", "a", "A", true), () -> fs.edit(RC, "d/x.txt", "a", "A", true), a, b);
        step("edit crlf", () -> o.edit("d/crlf.txt", "one\r\nbeta", "1\nB", false), () -> fs.edit(RC, "d/crlf.txt", "one\r\nbeta", "1\nB", false), a, b);
        step("edit empty file", () -> o.edit("d/empty.txt", "a", "b", false), () -> fs.edit(RC, "d/empty.txt", "a", "b", false), a, b);
        step("edit through link", () -> o.edit("d/link.txt", "gamma", "G", false), () -> fs.edit(RC, "d/link.txt", "gamma", "G", false), a, b);
        step("delete file", () -> o.delete("d/-dash.txt"), () -> fs.delete(RC, "d/-dash.txt"), a, b);
        step("delete missing", () -> o.delete("d/none"), () -> fs.delete(RC, "d/none"), a, b);
        step("delete dangling link", () -> o.delete("d/dang"), () -> fs.delete(RC, "d/dang"), a, b);
        step("delete dir", () -> o.delete("d/.hidden"), () -> fs.delete(RC, "d/.hidden"), a, b);
        step("delete dir symlink", () -> o.delete("d/dlink"), () -> fs.delete(RC, "d/dlink"), a, b);
        step("delete dir with loop", () -> o.delete("d/sub"), () -> fs.delete(RC, "d/sub"), a, b);
        step("move file", () -> o.move("d/a:b.txt", "m/a:b.txt"), () -> fs.move(RC, "d/a:b.txt", "m/a:b.txt"), a, b);
        step("move over file", () -> o.move("d/noeol.txt", "m/a:b.txt"), () -> fs.move(RC, "d/noeol.txt", "m/a:b.txt"), a, b);
        step("move missing", () -> o.move("d/none", "m/none"), () -> fs.move(RC, "d/none", "m/none"), a, b);
        step("move into dir", () -> o.move("d/crlf.txt", "m"), () -> fs.move(RC, "d/crlf.txt", "m"), a, b);
        step("move dir", () -> o.move("d/.git", "m2/g"), () -> fs.move(RC, "d/.git", "m2/g"), a, b);
        Files.createDirectories(a.resolve("m2/e"));
        Files.createDirectories(b.resolve("m2/e"));
        step("move dir over file", () -> o.move("m2/g", "d/x.txt"), () -> fs.move(RC, "m2/g", "d/x.txt"), a, b);
        step("move file over empty dir", () -> o.move("d/x.txt", "m2/e"), () -> fs.move(RC, "d/x.txt", "m2/e"), a, b);
        step("move space", () -> o.move("d/with space.md", "d/new dir/x y.md"), () -> fs.move(RC, "d/with space.md", "d/new dir/x y.md"), a, b);
        // A symlink moves itself (Files.move, mv), what it leads to untouched.
        for (Path t : List.of(a, b)) {
            Files.createSymbolicLink(t.resolve("m2/dl"), Path.of("e"));
            Files.createSymbolicLink(t.resolve("m2/dang2"), Path.of("nowhere"));
        }
        step("move dir symlink", () -> o.move("m2/dl", "m3/dl"), () -> fs.move(RC, "m2/dl", "m3/dl"), a, b);
        step("move file symlink", () -> o.move("d/link.txt", "m3/link.txt"), () -> fs.move(RC, "d/link.txt", "m3/link.txt"), a, b);
        step("move dangling symlink", () -> o.move("m2/dang2", "m3/dang2"), () -> fs.move(RC, "m2/dang2", "m3/dang2"), a, b);
    }

    static void racer(Path root) {
        try {
            w(root, "d/raced.txt", "the racer's\n");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static void step(String name, Supplier<Object> oracle, Supplier<Object> real, Path a, Path b) throws IOException {
        Object want = oracle.get();
        Object got = real.get();
        check(name, want, got);
        TreeMap<String, String> da = digest(a);
        TreeMap<String, String> db = digest(b);
        if (da.equals(db)) {
            check(name + " (tree)", true, true);
        } else {
            TreeMap<String, String> onlyA = new TreeMap<>(da);
            TreeMap<String, String> onlyB = new TreeMap<>(db);
            onlyA.entrySet().removeAll(db.entrySet());
            onlyB.entrySet().removeAll(da.entrySet());
            check(name + " (tree)", onlyA, onlyB);
        }
    }

    /** Every name under root with its type and bytes (mtimes differ between the copies). */
    static TreeMap<String, String> digest(Path root) throws IOException {
        TreeMap<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String rel = root.relativize(p).toString();
                if (rel.startsWith("many/") || rel.equals("huge.txt") || rel.equals("longline.txt")) {
                    continue; // only in the read side's tree, untouched by the write side
                }
                if (Files.isSymbolicLink(p)) {
                    m.put(rel, "link " + Files.readSymbolicLink(p));
                } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    m.put(rel, "file " + java.util.Arrays.hashCode(Files.readAllBytes(p)));
                } else {
                    m.put(rel, Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "dir" : "other");
                }
            }
        } catch (java.io.UncheckedIOException | java.nio.file.InvalidPathException e) {
            m.put("?", e.toString());
        }
        return m;
    }

    // ==================== Other backends, fallback, exceptions ====================

    /** The same commands executed without a shell, split as shlex.split splits them. */
    static void shlexBackend(AsEditFilesystem viaSh, String helper, Path b) {
        AsEditFilesystem fs = new AsEditFilesystem(new ShellBackend(b, true), helper);
        check("shlex backend: read", viaSh.read(RC, "d/x.txt", 0, 2), fs.read(RC, "d/x.txt", 0, 2));
        check("shlex backend: ls", viaSh.ls(RC, "d"), fs.ls(RC, "d"));
        check("shlex backend: grep", viaSh.grep(RC, "BETA", "d", "*.txt"), fs.grep(RC, "BETA", "d", "*.txt"));
        check("shlex backend: exists", true, fs.exists(RC, "d/x.txt"));
    }

    static void fallback(Path b) {
        ShellBackend backend = new ShellBackend(b, false);
        AsEditFilesystem fs = new AsEditFilesystem(backend, "/nonexistent/as-edit");
        check("fallback ls", LsResult.fail("backend ls"), fs.ls(RC, "d"));
        check("fallback read", ReadResult.fail("backend read"), fs.read(RC, "d/x.txt", 0, 10));
        check("fallback write", WriteResult.fail("backend write"), fs.write(RC, "d/q", "q"));
        check("fallback edit", EditResult.fail("backend edit"), fs.edit(RC, "d/x.txt", "a", "b", true));
        check("fallback grep", GrepResult.fail("backend grep"), fs.grep(RC, "a", "d", null));
        check("fallback glob", GlobResult.fail("backend glob"), fs.glob(RC, "*", "d"));
        check("fallback delete", WriteResult.fail("backend delete"), fs.delete(RC, "d/x.txt"));
        check("fallback move", WriteResult.fail("backend move"), fs.move(RC, "d/x.txt", "d/y"));
        check("fallback exists", 0, backend.existsCalls);
        fs.exists(RC, "d/x.txt");
        check("fallback exists", 1, backend.existsCalls);
        // Exit 0 and no result line (not as-edit at that path): the fallback too.
        try {
            Path quiet = b.resolve("quiet-helper");
            Files.writeString(quiet, "#!" + sh + "\necho something else\n");
            quiet.toFile().setExecutable(true);
            AsEditFilesystem q = new AsEditFilesystem(backend, quiet.toString());
            check("fallback without a result line: ls", LsResult.fail("backend ls"), q.ls(RC, "d"));
            check("fallback without a result line: read", ReadResult.fail("backend read"), q.read(RC, "d/x.txt", 0, 1));
            // A result line that does not parse: the method's failure result, nothing thrown.
            Files.writeString(quiet, "#!" + sh + "\necho '__RESULT__{oops'\n");
            check("garbled result: ls", LsResult.fail("Error listing 'd': unexpected helper output: __RESULT__{oops"), q.ls(RC, "d"));
            check("garbled result: exists", false, q.exists(RC, "d"));
            check("garbled result: write", WriteResult.fail("Failed to write file 'd/g': unexpected helper output: __RESULT__{oops"), q.write(RC, "d/g", "g"));
            Files.delete(quiet);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        check("delegated id", "test-backend", fs.id());
        check("delegated execute", "hi\n", fs.execute(RC, "echo hi", null).output());
        check("delegated upload", true, fs.uploadFiles(RC, List.of(Map.entry("up.txt", new byte[] {1}))).get(0).isSuccess());
        check("delegated download", 1, fs.downloadFiles(RC, List.of("up.txt")).get(0).content().length);
    }

    static void exceptions(AsEditFilesystem fs) {
        // Nulls are failure results, never exceptions (the Javadoc's promise).
        check("null: ls", false, fs.ls(RC, null).isSuccess());
        check("null: read", false, fs.read(RC, null, 0, 10).isSuccess());
        check("null: write path", false, fs.write(RC, null, "x").isSuccess());
        check("null: write content", false, fs.write(RC, "d/n.txt", null).isSuccess());
        check("null: edit old", false, fs.edit(RC, "d/new.txt", null, "x", false).isSuccess());
        check("null: grep", false, fs.grep(RC, null, "d", null).isSuccess());
        check("null: glob", false, fs.glob(RC, null, "d").isSuccess());
        check("null: exists", false, fs.exists(RC, null));
        throwsIae("delete ..", () -> fs.delete(RC, "d/../x"));
        throwsIae("delete blank", () -> fs.delete(RC, " "));
        throwsIae("move null", () -> fs.move(RC, null, "x"));
        throwsIae("move ..", () -> fs.move(RC, "d/x.txt", "../x"));
        throwsIae("new null backend", () -> new AsEditFilesystem(null, "/x"));
        throwsIae("new blank helper", () -> new AsEditFilesystem(new ShellBackend(Path.of("/"), false), ""));
    }

    static void throwsIae(String name, Runnable r) {
        try {
            r.run();
            check(name, "IllegalArgumentException", "nothing thrown");
        } catch (IllegalArgumentException e) {
            check(name, true, true);
        }
    }

    /** Equal; or, where the expected text holds "…", equal up to it (a helper's detail). */
    static long last = System.nanoTime();

    static void check(String name, Object want, Object got) {
        long now = System.nanoTime();
        if (System.getenv("AS_EDIT_JAVA_TIMES") != null) {
            System.out.printf("%6d ms %s%n", (now - last) / 1_000_000, name.replace("\n", "\\n"));
        }
        last = now;
        String ws = String.valueOf(want);
        int cutAt = ws.indexOf('…');
        if (Objects.equals(want, got)
                || (cutAt >= 0 && want.getClass() == got.getClass()
                        && String.valueOf(got).startsWith(ws.substring(0, cutAt)))) {
            passed++;
        } else {
            failed++;
            String w = String.valueOf(want);
            String g = String.valueOf(got);
            System.out.println("FAIL " + name.replace("\n", "\\n") + "\n  want " + cut(w) + "\n  got  " + cut(g));
        }
    }

    static String cut(String s) {
        s = s.replace("\n", "\\n");
        return s.length() > 600 ? s.substring(0, 600) + "…(" + s.length() + ")" : s;
    }

    static String run(Path dir, String cmd) {
        try {
            ProcessBuilder pb = new ProcessBuilder(sh, "-c", cmd).directory(dir.toFile()).redirectErrorStream(true);
            pb.environment().put("PATH", pathEnv);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    // ==================== The test backend ====================

    /**
     * A sandbox on the local disk: execute through `sh -c` (or, with argv, split as shlex.split
     * splits single quotes and exec'd without a shell), output cut at 512 KiB as the backends
     * cut it. Its own filesystem methods answer markers, so a fallback is seen.
     */
    static final class ShellBackend implements AbstractSandboxFilesystem {
        final Path cwd;
        final boolean argv;
        int existsCalls;
        Runnable afterUpload;

        ShellBackend(Path cwd, boolean argv) {
            this.cwd = cwd;
            this.argv = argv;
        }

        @Override
        public String id() {
            return "test-backend";
        }

        @Override
        public ExecuteResponse execute(RuntimeContext rc, String command, Integer timeout) {
            try {
                List<String> cmd = argv ? shlex(command) : List.of(sh, "-c", command);
                ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true);
                pb.environment().put("PATH", pathEnv);
                Process p;
                try {
                    p = pb.start();
                } catch (IOException e) {
                    return new ExecuteResponse("exec: not found", 127, false);
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (InputStream in = p.getInputStream()) {
                    in.transferTo(out);
                }
                int exit = p.waitFor();
                byte[] bytes = out.toByteArray();
                boolean cut = bytes.length > 512 * 1024;
                String s = new String(bytes, 0, Math.min(bytes.length, 512 * 1024), StandardCharsets.UTF_8);
                return new ExecuteResponse(s, exit, cut);
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        static List<String> shlex(String s) {
            List<String> out = new ArrayList<>();
            StringBuilder cur = null;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '\'') {
                    int end = s.indexOf('\'', i + 1);
                    cur = cur == null ? new StringBuilder() : cur;
                    cur.append(s, i + 1, end);
                    i = end;
                } else if (c == '\\') {
                    cur = cur == null ? new StringBuilder() : cur;
                    cur.append(s.charAt(++i));
                } else if (c == ' ') {
                    if (cur != null) {
                        out.add(cur.toString());
                    }
                    cur = null;
                } else {
                    cur = cur == null ? new StringBuilder() : cur;
                    cur.append(c);
                }
            }
            if (cur != null) {
                out.add(cur.toString());
            }
            return out;
        }

        @Override
        public List<FileUploadResponse> uploadFiles(RuntimeContext rc, List<Map.Entry<String, byte[]>> files) {
            List<FileUploadResponse> out = new ArrayList<>();
            for (Map.Entry<String, byte[]> f : files) {
                try {
                    Path p = cwd.resolve(f.getKey());
                    Files.createDirectories(p.getParent());
                    Files.write(p, f.getValue());
                    out.add(FileUploadResponse.success(f.getKey()));
                    if (afterUpload != null) {
                        afterUpload.run();
                    }
                } catch (IOException e) {
                    out.add(FileUploadResponse.fail(f.getKey(), e.toString()));
                }
            }
            return out;
        }

        @Override
        public List<FileDownloadResponse> downloadFiles(RuntimeContext rc, List<String> paths) {
            List<FileDownloadResponse> out = new ArrayList<>();
            for (String p : paths) {
                try {
                    out.add(FileDownloadResponse.success(p, Files.readAllBytes(cwd.resolve(p))));
                } catch (IOException e) {
                    out.add(FileDownloadResponse.fail(p, "file_not_found"));
                }
            }
            return out;
        }

        @Override
        public LsResult ls(RuntimeContext rc, String path) {
            return LsResult.fail("backend ls");
        }

        @Override
        public ReadResult read(RuntimeContext rc, String filePath, int offset, int limit) {
            return ReadResult.fail("backend read");
        }

        @Override
        public WriteResult write(RuntimeContext rc, String filePath, String content) {
            return WriteResult.fail("backend write");
        }

        @Override
        public EditResult edit(RuntimeContext rc, String p, String o, String n, boolean all) {
            return EditResult.fail("backend edit");
        }

        @Override
        public GrepResult grep(RuntimeContext rc, String pattern, String path, String glob) {
            return GrepResult.fail("backend grep");
        }

        @Override
        public GlobResult glob(RuntimeContext rc, String pattern, String path) {
            return GlobResult.fail("backend glob");
        }

        @Override
        public WriteResult delete(RuntimeContext rc, String path) {
            return WriteResult.fail("backend delete");
        }

        @Override
        public WriteResult move(RuntimeContext rc, String from, String to) {
            return WriteResult.fail("backend move");
        }

        @Override
        public boolean exists(RuntimeContext rc, String path) {
            existsCalls++;
            return false;
        }
    }
}
