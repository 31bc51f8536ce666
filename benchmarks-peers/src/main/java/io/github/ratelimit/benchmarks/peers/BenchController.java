package io.github.ratelimit.benchmarks.peers;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * The same body three times: only what stands in front of it differs. Each counts the requests that reached it, the
 * admitted ones, read by benchmarks/peers.sh's exactness mode at {@code /admitted/{endpoint}}.
 */
@RestController
class BenchController {

	private static final String BODY = "ok";

	private final LongAdder unlimited = new LongAdder();

	private final LongAdder ours = new LongAdder();

	private final LongAdder peer = new LongAdder();

	private final Map<String, LongAdder> admitted = Map.of("unlimited", this.unlimited, "ours", this.ours, "peer",
			this.peer);

	@GetMapping("/unlimited")
	String unlimited() {
		this.unlimited.increment();
		return BODY;
	}

	/**
	 * Keyed by the client IP (the default key), read from X-Forwarded-For behind the trusted proxy 127.0.0.1; the
	 * limit (ratelimit.policies.hot.limit in application.yml) never rejects in the benchmark.
	 */
	@RateLimited(name = "hot", limit = 1_000_000_000L, window = "1m")
	@GetMapping("/ours")
	String ours() {
		this.ours.increment();
		return BODY;
	}

	/**
	 * No annotation: Bucket4j's servlet filter (bucket4j.filters, url ^/peer$) limits it in the bucket4j profiles.
	 */
	@GetMapping("/peer")
	String peer() {
		this.peer.increment();
		return BODY;
	}

	/**
	 * How many requests the endpoint has served since the start: {@code unlimited}, {@code ours} or {@code peer}.
	 */
	@GetMapping("/admitted/{endpoint}")
	ResponseEntity<String> admitted(@PathVariable String endpoint) {
		LongAdder counter = this.admitted.get(endpoint);
		return (counter != null) ? ResponseEntity.ok(Long.toString(counter.sum())) : ResponseEntity.notFound().build();
	}

}
