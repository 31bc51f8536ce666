package io.github.ratelimit.webflux;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spellings of a path the filter layer matches: a path in its normal form is its only one; another spelling also
 * has the path a server that cleans paths up would serve.
 */
class PathSpellingsTests {

	@ParameterizedTest
	@ValueSource(strings = { "/", "/api/v1/resources", "/api/v1/re.sources", "/api/v1/.well-known", "/api/v1/..x",
			"/api/v1/a%20b", "/files/a%3Bb" })
	void aPathInItsNormalFormIsItsOnlySpelling(String path) {
		assertThat(spellings(path)).containsExactly(path);
	}

	@ParameterizedTest
	@CsvSource({ "/api//v1/resources, /api/v1/resources", "//api/v1/resources, /api/v1/resources",
			"/api/v1/./resources, /api/v1/resources", "/api/x/../v1/resources, /api/v1/resources",
			"/api/v1/resources/., /api/v1/resources", "/../api/v1/resources, /api/v1/resources",
			"/api/v1/%2e/resources, /api/v1/resources", "/api/v1/x/%2E%2E/resources, /api/v1/resources",
			"/api/v1%2Fresources, /api/v1/resources", "/api%2fv1%5Cresources, /api/v1/resources",
			"/api/v1/resources/, /api/v1/resources", "/api;a=b/v1/resources;x=1, /api/v1/resources",
			"/api/;x=1/v1/resources, /api/v1/resources", "/api/v1/%72esources, /api/v1/resources",
			"/api/v1/%25zz/, /api/v1/%25zz", "/.., /" })
	void anyOtherSpellingAlsoHasThePathACleaningServerServes(String path, String cleaned) {
		assertThat(spellings(path)).containsExactly(path, cleaned);
	}

	private static List<String> spellings(String path) {
		return PathSpellings.of(RequestPath.parse(path, null).pathWithinApplication())
			.stream()
			.map(PathContainer::value)
			.toList();
	}

}
