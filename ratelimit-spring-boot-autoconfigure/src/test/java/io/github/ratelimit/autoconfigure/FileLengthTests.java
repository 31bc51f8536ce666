package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every file a reader opens fits in their head: no production source of any module over 500 lines, a README of at
 * most 300. Benchmarks are tools, not the library, and are left out.
 */
class FileLengthTests {

	private static final Path PROJECT = Path.of("..").toAbsolutePath().normalize();

	@Test
	void noProductionSourceOfAnyModuleIsLongerThan500Lines() throws IOException {
		Map<String, Long> sources = new TreeMap<>();
		try (Stream<Path> modules = Files.list(PROJECT)) {
			for (Path module : modules.filter((path) -> Files.isDirectory(path.resolve("src/main/java")))
				.filter((path) -> !path.getFileName().toString().startsWith("benchmarks"))
				.toList()) {
				try (Stream<Path> files = Files.walk(module.resolve("src/main/java"))) {
					files.filter((file) -> file.toString().endsWith(".java"))
						.forEach((file) -> sources.put(PROJECT.relativize(file).toString(), lines(file)));
				}
			}
		}
		assertThat(sources).as("production sources").hasSizeGreaterThan(200);
		assertThat(sources).allSatisfy((file, lines) -> assertThat(lines).as(file).isLessThanOrEqualTo(500));
	}

	@Test
	void theReadmeIsAtMost300Lines() {
		assertThat(lines(PROJECT.resolve("README.md"))).isPositive().isLessThanOrEqualTo(300);
	}

	@Test
	void everyModuleOfTheBuildIsScanned() throws IOException {
		List<String> withSources;
		try (Stream<Path> modules = Files.list(PROJECT)) {
			withSources = modules.filter((path) -> Files.isDirectory(path.resolve("src/main/java")))
				.map((path) -> path.getFileName().toString())
				.toList();
		}
		assertThat(withSources).contains("ratelimit-core", "ratelimit-spring", "ratelimit-redis", "ratelimit-dynamodb",
				"ratelimit-spring-boot-autoconfigure", "sample-app");
	}

	private static long lines(Path file) {
		try (Stream<String> lines = Files.lines(file)) {
			return lines.count();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
