package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

/**
 * A limit of the filter layer ({@code ratelimit.filters.<name>}): where it applies, and its policy's settings.
 */
public class FilterProperties extends PolicyProperties {

	/**
	 * Request paths the filter applies to, in Spring PathPattern syntax (/api/**), within the application (after
	 * the context path). Required.
	 */
	private List<String> paths = new ArrayList<>();

	/**
	 * HTTP methods the filter applies to. Empty: every method.
	 */
	private List<String> methods = new ArrayList<>();

	/**
	 * Order among filters: lower first. Filters that apply to a request are decided together, all or nothing.
	 */
	private int order;

	/**
	 * Shared policies (defined under ratelimit.policies) that requests matching this filter draw from too, decided
	 * with the filter's own limit.
	 */
	private List<String> policies = new ArrayList<>();

	public List<String> getPaths() {
		return this.paths;
	}

	public void setPaths(List<String> paths) {
		this.paths = paths;
	}

	public List<String> getMethods() {
		return this.methods;
	}

	public void setMethods(List<String> methods) {
		this.methods = methods;
	}

	public int getOrder() {
		return this.order;
	}

	public void setOrder(int order) {
		this.order = order;
	}

	public List<String> getPolicies() {
		return this.policies;
	}

	public void setPolicies(List<String> policies) {
		this.policies = policies;
	}

}
