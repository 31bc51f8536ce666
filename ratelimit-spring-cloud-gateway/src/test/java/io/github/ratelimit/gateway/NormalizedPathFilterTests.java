package io.github.ratelimit.gateway;

import java.net.URI;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's path check before routing: a path that a service could resolve to another path is refused with a
 * problem, and never reaches the routes; a path in its normal form passes, with its trailing slash, its parameters and
 * its encoded characters.
 */
class NormalizedPathFilterTests {

	@ParameterizedTest
	@ValueSource(strings = { "/api//v1/resources", "//api/v1/resources", "/api/v1/resources//", "/api/v1/./resources",
			"/api/x/../v1/resources", "/api/v1/resources/.", "/api/v1/resources/..", "/api/v1/%2e/resources",
			"/api/v1/x/%2E%2E/resources", "/api/v1/.;x=1/resources", "/api/v1%2Fresources", "/api%2fv1/resources",
			"/api/v1/resources%2F", "/api/v1%5Cresources", "/api/;x=1/v1/resources", "/api/v1/resources%3Bx=1",
			"/api/v1%252Fresources", "/api/v1/%252e%252e/resources", "/api/v1/resources%253B" })
	void aPathThatAServiceCouldResolveToAnotherIsRefusedWithAProblemBeforeRouting(String path) {
		MockServerWebExchange exchange = exchange(path);
		boolean[] routed = { false };
		new NormalizedPathFilter().filter(exchange, (passed) -> {
			routed[0] = true;
			return Mono.empty();
		}).block();
		assertThat(routed[0]).isFalse();
		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
		assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(exchange.getResponse().getBodyAsString().block()).contains("\"status\":400");
	}

	@ParameterizedTest
	@ValueSource(strings = { "/", "/api/v1/resources", "/api/v1/resources/", "/api/v1/resources;x=1",
			"/api;a=b/v1/resources", "/api/v1/%72esources", "/API/v1/Resources", "/api/v1/.well-known/x",
			"/api/v1/..x/a.b", "/api/v1/a%20b%25c" })
	void aPathInItsNormalFormPasses(String path) {
		MockServerWebExchange exchange = exchange(path);
		boolean[] routed = { false };
		new NormalizedPathFilter().filter(exchange, (passed) -> {
			routed[0] = true;
			return Mono.empty();
		}).block();
		assertThat(routed[0]).isTrue();
		assertThat(exchange.getResponse().getStatusCode()).isNull();
	}

	private static MockServerWebExchange exchange(String path) {
		return MockServerWebExchange
			.from(MockServerHttpRequest.method(HttpMethod.GET, URI.create("http://gateway.test" + path)).build());
	}

}
