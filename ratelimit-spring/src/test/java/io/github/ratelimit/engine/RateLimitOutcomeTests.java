package io.github.ratelimit.engine;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitUnavailableException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.json.ProblemDetailJacksonMixin;
import org.springframework.web.ErrorResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The problem a layer that answers before any message converter runs writes: the one Spring writes for the method
 * layer's rejection, its instance the request's path, however that path is spelled.
 */
class RateLimitOutcomeTests {

	/** Parses strictly: a control character left unescaped in a string is an error. */
	private final JsonMapper json = JsonMapper.builder().build();

	/** Writes a problem as Spring's message converters do. */
	private final JsonMapper spring = JsonMapper.builder().addMixIn(ProblemDetail.class, ProblemDetailJacksonMixin.class)
		.build();

	private final RateLimitPolicy orders = RateLimitPolicy.builder("orders")
		.limit(10)
		.window(Duration.ofMinutes(1))
		.build();

	@Test
	void theProblemIsTheOneSpringWritesForTheMethodLayerWithTheRequestPathAsItsInstance() {
		RateLimitExceededException rejection = new RateLimitExceededException(this.orders, rejected());
		RateLimitOutcome outcome = rejectedBy(rejection);

		String problem = outcome.problemJson("/api/v1/orders/42");

		ProblemDetail asSpringWritesIt = copyOf(rejection.getBody());
		asSpringWritesIt.setInstance(URI.create("/api/v1/orders/42"));
		// The same members and values; their order means nothing in JSON, and Jackson 3 sorts them.
		JsonNode springs = this.json.readTree(this.spring.writeValueAsString(asSpringWritesIt));
		assertThat(this.json.readTree(problem)).isEqualTo(springs);
		assertThat(this.json.readTree(problem).get("instance").asString()).isEqualTo("/api/v1/orders/42");
	}

	@Test
	void aStoreOutagesProblemIsOfTheDraftsTemporaryReducedCapacityTypeAndNamesItsInstance() {
		RateLimitOutcome outcome = rejectedBy(new RateLimitUnavailableException(this.orders, rejected()));

		JsonNode problem = this.json.readTree(outcome.problemJson("/api/v1/orders"));

		assertThat(problem.get("status").asInt()).isEqualTo(503);
		assertThat(problem.get("type").asString())
			.isEqualTo("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
		assertThat(problem.get("instance").asString()).isEqualTo("/api/v1/orders");
	}

	@Test
	void anInstanceOfAnyCharactersIsEscapedIntoJsonThatReadsBackAsThePath() {
		RateLimitOutcome outcome = rejectedBy(new RateLimitExceededException(this.orders, rejected()));
		List<String> paths = List.of("/a\"b", "/a\\b", "/\"},\"status\":200,\"x\":\"", "/line\nfeed\rreturn\ttab",
				"/nul\u0000bell\u0007escape\u001bunit\u001fdelete\u007f", "/caf\u00e9/\u65e5\u672c/\ud83d\ude00",
				"/separators\u2028\u2029", "/%22%5C%00?q=\"\\");
		for (String path : paths) {
			byte[] sent = outcome.problemJson(path).getBytes(StandardCharsets.UTF_8);

			JsonNode problem = this.json.readTree(sent);

			assertThat(problem.get("instance").asString()).as(path).isEqualTo(path);
			assertThat(problem.get("status").asInt()).as(path).isEqualTo(429);
			assertThat(problem.propertyNames()).as(path)
				.containsExactlyInAnyOrder("type", "title", "status", "detail", "instance", "policy", "violated-policies",
						"retryAfter");
		}
	}

	@Test
	void aProblemThatNamesItsOwnInstanceKeepsIt() {
		RateLimitExceededException rejection = new RateLimitExceededException(this.orders, rejected());
		rejection.getBody().setInstance(URI.create("/its/own"));

		JsonNode problem = this.json.readTree(rejectedBy(rejection).problemJson("/api/v1/orders"));

		assertThat(problem.get("instance").asString()).isEqualTo("/its/own");
	}

	@Test
	void anAdmittedRequestHasNoProblem() {
		assertThatIllegalStateException().isThrownBy(() -> RateLimitOutcome.NONE.problemJson("/api/v1/orders"));
	}

	private static Decision rejected() {
		return Decision.rejected(10, 0, 60_000, 30_000);
	}

	private static RateLimitOutcome rejectedBy(ErrorResponseException rejection) {
		return new RateLimitOutcome(List.of(), HttpHeaders.EMPTY, rejection, LayerHold.NONE);
	}

	private static ProblemDetail copyOf(ProblemDetail problem) {
		ProblemDetail copy = ProblemDetail.forStatus(problem.getStatus());
		copy.setType(problem.getType());
		copy.setTitle(problem.getTitle());
		copy.setDetail(problem.getDetail());
		if (problem.getProperties() != null) {
			problem.getProperties().forEach(copy::setProperty);
		}
		return copy;
	}

}
