package io.github.ratelimit.mcp;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitedMethods;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The {@code @RateLimited} tools of the application's beans, by the name an MCP client calls them: Spring AI's
 * {@code @McpTool} and {@code @Tool} methods, named by the annotation's {@code name} or else the method's.
 */
final class McpToolMethods {

	/** The annotations that make a method a tool, with a {@code name} attribute. */
	static final List<String> TOOL_ANNOTATIONS = List.of("org.springframework.ai.mcp.annotation.McpTool",
			"org.springframework.ai.tool.annotation.Tool");

	/** A rate limited tool: the method that implements it, and its parameters' names for its arguments. */
	record Target(Method method, Class<?> targetClass, String[] parameterNames) {

		/** The call's arguments as the method's, by name: JSON's values, not yet converted to the parameters' types. */
		Object[] arguments(@Nullable Map<String, Object> arguments) {
			Object[] values = new Object[this.parameterNames.length];
			for (int i = 0; i < values.length; i++) {
				values[i] = (arguments != null) ? arguments.get(this.parameterNames[i]) : null;
			}
			return values;
		}

	}

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	private final Map<String, Target> targets;

	private McpToolMethods(Map<String, Target> targets) {
		this.targets = targets;
	}

	/**
	 * Find the rate limited tools of a bean factory's beans.
	 * @throws InvalidRateLimitPolicyException if two rate limited methods are tools of one name
	 */
	static McpToolMethods of(ConfigurableListableBeanFactory beanFactory) {
		Map<String, Target> targets = new HashMap<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type == null || !RateLimitedMethods.isCandidate(type)) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass,
					ReflectionUtils.USER_DECLARED_METHODS)) {
				String tool = toolName(method);
				if (tool == null || RateLimitedMethods.annotationsOf(method, userClass).isEmpty()) {
					continue;
				}
				String[] names = PARAMETER_NAMES.getParameterNames(method);
				Target target = new Target(method, userClass, (names != null) ? names : new String[0]);
				Target other = targets.putIfAbsent(tool, target);
				if (other != null && !other.method().equals(method)) {
					throw new InvalidRateLimitPolicyException(tool, "Two rate limited methods are MCP tools named '"
							+ tool + "': " + userClass.getSimpleName() + "#" + method.getName() + " and "
							+ other.targetClass().getSimpleName() + "#" + other.method().getName()
							+ ". Name each tool apart ('name' of @McpTool or @Tool).");
				}
			}
		}
		return new McpToolMethods(Map.copyOf(targets));
	}

	/**
	 * Return the rate limited method a call of a tool invokes.
	 * @param tool the tool's name
	 * @return the target, or {@code null} if the tool is not rate limited
	 */
	@Nullable Target find(String tool) {
		return this.targets.get(tool);
	}

	/** A tool's name, or {@code null} for a method that is no tool. */
	static @Nullable String toolName(Method method) {
		MergedAnnotations annotations = MergedAnnotations.from(method);
		for (String type : TOOL_ANNOTATIONS) {
			MergedAnnotation<?> tool = annotations.get(type);
			if (tool.isPresent()) {
				String name = tool.getString("name");
				return name.isEmpty() ? method.getName() : name;
			}
		}
		return null;
	}

}
