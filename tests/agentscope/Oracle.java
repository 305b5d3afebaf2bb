// as-edit's model of what AsEditFilesystem must answer: LocalFilesystem's semantics (learnt from
// agentscope-java's local/LocalFilesystem.java, written anew here on java.nio) with the shell
// version's strings and formats where examples/agentscope/README.md says so. Paths are relative
// to the tree, as the backend's working directory is.
import io.agentscope.harness.agent.filesystem.AbstractFilesystem;
import io.agentscope.harness.agent.filesystem.model.EditResult;
import io.agentscope.harness.agent.filesystem.model.FileData;
import io.agentscope.harness.agent.filesystem.model.FileInfo;
import io.agentscope.harness.agent.filesystem.model.GlobResult;
import io.agentscope.harness.agent.filesystem.model.GrepMatch;
import io.agentscope.harness.agent.filesystem.model.GrepResult;
import io.agentscope.harness.agent.filesystem.model.LsResult;
import io.agentscope.harness.agent.filesystem.model.ReadResult;
import io.agentscope.harness.agent.filesystem.model.WriteResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

final class Oracle {
    static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    final Path root;

    Oracle(Path root) {
        this.root = root;
    }

    LsResult ls(String p) {
        Path dir = root.resolve(p);
        if (!Files.exists(dir)) {
            return LsResult.fail("Directory '" + p + "' not found: " + p + " does not exist");
        }
        if (!Files.isDirectory(dir)) {
            return LsResult.fail(
                    "Directory '" + p + "' not found: " + p + " is a regular file, not a directory");
        }
        List<FileInfo> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path e : (Iterable<Path>) s::iterator) {
                String path = p + "/" + e.getFileName();
                BasicFileAttributes led;
                try {
                    led = Files.readAttributes(e, BasicFileAttributes.class);
                } catch (IOException dangling) {
                    continue; // LocalFilesystem skips what it cannot stat (dangling, loops)
                }
                // A link is listed as what it leads to, with that one's size and mtime
                // (LocalFilesystem's readAttributes follows links).
                long ms = led.lastModifiedTime().toMillis();
                if (led.isDirectory()) {
                    out.add(FileInfo.ofDir(path, ms));
                } else {
                    out.add(FileInfo.ofFile(path, led.size(), ms));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(Comparator.comparing(FileInfo::path));
        return LsResult.success(out);
    }

    ReadResult read(String p, int offset, int limit) {
        Path f = root.resolve(p);
        if (!Files.isRegularFile(f)) {
            return ReadResult.fail("File '" + p + "': file_not_found");
        }
        byte[] bytes = readAll(f);
        if (bytes.length == 0) {
            return ReadResult.success(
                    new FileData("System reminder: File exists but has empty contents", "utf-8"));
        }
        String text = utf8(bytes);
        if (text == null) {
            return ReadResult.success(
                    new FileData(Base64.getEncoder().encodeToString(bytes), "base64"));
        }
        List<String> lines = lines(text);
        int start = Math.max(0, offset);
        // LocalFilesystem's split("\n", -1): after a final newline one more, empty, line.
        int counted = text.split("\n", -1).length;
        if (start >= counted) {
            return ReadResult.fail(
                    "Line offset " + offset + " exceeds file length (" + counted + " lines)");
        }
        if (start >= lines.size()) {
            return ReadResult.success(new FileData("", "utf-8"));
        }
        int end = limit > 0 ? Math.min(start + limit, lines.size()) : lines.size();
        return ReadResult.success(new FileData(String.join("\n", lines.subList(start, end)), "utf-8"));
    }

    WriteResult write(String p, String content) {
        Path f = root.resolve(p);
        if (Files.exists(f, NOFOLLOW)) {
            return WriteResult.fail("Cannot write to " + p + " because it already exists. Read and"
                    + " then make an edit, or write to a new path.");
        }
        try {
            Files.createDirectories(f.getParent());
            Files.writeString(f, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return WriteResult.ok(p);
    }

    EditResult edit(String p, String old, String neu, boolean all) {
        Path f = root.resolve(p);
        if (!Files.isRegularFile(f)) {
            return EditResult.fail("Error: File '" + p + "' not found");
        }
        String content = utf8(readAll(f)).replace("\r\n", "\n").replace("\r", "\n");
        String o = old.replace("\r\n", "\n").replace("\r", "\n");
        String n = neu.replace("\r\n", "\n").replace("\r", "\n");
        int count = 0;
        for (int i = content.indexOf(o); i >= 0; i = content.indexOf(o, i + o.length())) {
            count++;
        }
        if (count == 0) {
            return EditResult.fail("Error: String not found in file: '" + old + "'");
        }
        if (count > 1 && !all) {
            return EditResult.fail("Error: String '" + old + "' appears multiple times. Use"
                    + " replaceAll=true to replace all occurrences.");
        }
        int i = content.indexOf(o);
        String result = all ? content.replace(o, n)
                : content.substring(0, i) + n + content.substring(i + o.length());
        try {
            Files.writeString(f, result, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return EditResult.ok(p, count);
    }

    GrepResult grep(String pattern, String path, String glob) {
        String base = path != null ? path : ".";
        Path start = root.resolve(base);
        if (!Files.exists(start)) {
            return GrepResult.success(List.of());
        }
        List<GrepMatch> out = new ArrayList<>();
        for (Path file : files(start)) {
            String rel = start.relativize(file).toString();
            String shown = rel.isEmpty() ? base : ".".equals(base) ? rel : base + "/" + rel;
            if (!rel.isEmpty() && glob != null && !glob.isBlank() && !globMatches(glob, rel)) {
                continue;
            }
            byte[] bytes = readAll(file);
            boolean binary = false;
            for (int i = 0; i < Math.min(bytes.length, 8192); i++) {
                binary |= bytes[i] == 0;
            }
            if (binary) {
                continue;
            }
            List<String> lines = lines(new String(bytes, StandardCharsets.UTF_8));
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(pattern)) {
                    out.add(new GrepMatch(shown, i + 1, lines.get(i).replaceAll("[\r\n]+$", "")));
                }
            }
        }
        out.sort(Comparator.comparing(GrepMatch::path)); // stable: line order kept
        return GrepResult.success(out);
    }

    /** rg's --glob as LocalFilesystem passes it: no '/' matches the name at any depth. */
    static boolean globMatches(String glob, String rel) {
        if (!glob.contains("/")) {
            PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + glob);
            return m.matches(Path.of(rel).getFileName());
        }
        return anchoredMatches(glob, rel);
    }

    /**
     * The whole relative path, rg's way: each "**&#47;" also matches no directory (Java's needs
     * one), so it is tried with and without each of them.
     */
    static boolean anchoredMatches(String glob, String rel) {
        if (FileSystems.getDefault().getPathMatcher("glob:" + glob).matches(Path.of(rel))) {
            return true;
        }
        for (int i = glob.indexOf("**/"); i >= 0; i = glob.indexOf("**/", i + 1)) {
            if ((i == 0 || glob.charAt(i - 1) == '/')
                    && anchoredMatches(glob.substring(0, i) + glob.substring(i + 3), rel)) {
                return true;
            }
        }
        return false;
    }

    GlobResult glob(String pattern, String path) {
        // rg's --glob, as grep's: a leading '/' anchors (the rest is the whole path).
        boolean anchored = pattern.startsWith("/");
        String p = anchored ? pattern.substring(1) : pattern;
        String base = path == null || "/".equals(path) ? "." : path;
        Path start = root.resolve(base);
        if (!Files.isDirectory(start)) {
            return GlobResult.success(List.of());
        }
        List<FileInfo> out = new ArrayList<>();
        for (Path file : files(start)) {
            Path rel = start.relativize(file);
            if (anchored ? anchoredMatches(p, rel.toString()) : globMatches(p, rel.toString())) {
                try {
                    BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, NOFOLLOW);
                    String shown = ".".equals(base) ? rel.toString() : base + "/" + rel;
                    out.add(FileInfo.ofFile(shown, a.size(), a.lastModifiedTime().toMillis()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        out.sort(Comparator.comparing(FileInfo::path));
        return GlobResult.success(out);
    }

    boolean exists(String p) {
        return !p.isBlank() && Files.exists(root.resolve(p));
    }

    WriteResult delete(String p) {
        AbstractFilesystem.validatePath(p);
        Path f = root.resolve(p);
        if (!Files.exists(f, NOFOLLOW)) {
            return WriteResult.ok(p);
        }
        try (Stream<Path> s = Files.walk(f)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return WriteResult.ok(p);
    }

    WriteResult move(String from, String to) {
        AbstractFilesystem.validatePath(from);
        AbstractFilesystem.validatePath(to);
        Path f = root.resolve(from);
        Path t = root.resolve(to);
        if (!Files.exists(f, NOFOLLOW)) {
            return WriteResult.fail("Source does not exist: " + from);
        }
        if (Files.isDirectory(t) || (Files.isDirectory(f, NOFOLLOW) && Files.exists(t, NOFOLLOW))) {
            // Never into a directory (the shell's mv would), nor over one (LocalFilesystem's
            // REPLACE_EXISTING replaces an empty one), nor a directory over anything; the
            // detail is the helper's.
            return WriteResult.fail("Error moving '" + from + "' to '" + to + "': …");
        }
        try {
            Files.createDirectories(t.getParent());
            Files.move(f, t, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return WriteResult.ok(to);
    }

    /** Regular files under start (itself if it is one), no symlink followed. */
    static List<Path> files(Path start) {
        if (Files.isRegularFile(start)) {
            return List.of(start);
        }
        try (Stream<Path> s = Files.walk(start)) {
            return s.filter(q -> Files.isRegularFile(q, NOFOLLOW)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines as sed and the helper count them: a final newline ends the last line. */
    static List<String> lines(String text) {
        List<String> l = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
        if (text.endsWith("\n")) {
            l.remove(l.size() - 1);
        }
        return l;
    }

    static String utf8(byte[] b) {
        for (byte x : b) {
            if (x == 0) {
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    static byte[] readAll(Path f) {
        try {
            return Files.readAllBytes(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
