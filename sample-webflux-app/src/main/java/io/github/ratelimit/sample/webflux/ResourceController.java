package io.github.ratelimit.sample.webflux;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;
import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The endpoints of the seed articles: a resource limited per client IP, and orders limited per user.
 */
@RestController
@RequestMapping("/api/v1")
public class ResourceController {

	/**
	 * Five requests per minute per client IP, in fixed windows.
	 */
	@RateLimited(name = "resources", limit = 5, window = "1m")
	@GetMapping("/resources")
	public Mono<Map<String, Object>> resources() {
		return Mono.just(Map.of("status", "success", "data", "the resource payload goes here"));
	}

	/**
	 * Ten requests per minute per user.
	 */
	@RateLimited(name = "orders", limit = 10, window = "1m", key = "#userId")
	@GetMapping("/users/{userId}/orders")
	public Mono<Map<String, Object>> orders(@PathVariable String userId) {
		return Mono.just(Map.of("status", "success", "data",
				Map.of("userId", userId, "orders", List.of(Map.of("id", 1, "item", "coffee beans")))));
	}

	/**
	 * The same payload without any limit, to measure what rate limiting costs.
	 */
	@GetMapping("/unlimited")
	public Mono<Map<String, Object>> unlimited() {
		return Mono.just(Map.of("status", "success", "data", "the resource payload goes here"));
	}

}
