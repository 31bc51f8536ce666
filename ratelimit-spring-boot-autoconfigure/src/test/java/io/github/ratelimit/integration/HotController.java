package io.github.ratelimit.integration;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * One hot policy, keyed by an argument, so that tests can call the proxied method directly from many threads. Its
 * window is so long that a test never straddles a window edge; properties change the algorithm and the limit.
 */
@RestController
public class HotController {

	@RateLimited(name = "hot", limit = 100, window = "10000d", key = "#key")
	@GetMapping("/hot/{key}")
	public String hit(@PathVariable String key) {
		return "ok";
	}

}
